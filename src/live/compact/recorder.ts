// Reading one rule item of the listing statement by statement (the first rule of each
// shape, rules.ts), recording the reading as a shape: a regular expression for the item,
// its values as captures, and the rule's text as pieces and captures.
//
// Only the exact spelling nft 1.0.6 prints for what kproxc writes is read here (its key
// order, its spacing, names and comments without escapes, canonical addresses), and for
// each of those the text is what checked/json.ts and text.ts together make of it. Anything
// else (ranges, interface names, a hand-made counter, another nft's spelling) is null, and
// the rule is read as JSON by the checked reader.
import { formatCIDR, formatIP, parseCIDR, parseIP } from '../../net/ip.js';
import type { Family } from '../../nft/expr.js';
import { markHex } from '../../nft/text.js';

// Names as kproxc writes them (objects.ts NAME_RE): nothing in them can be misread in text.
const NAME = '[A-Za-z_.][A-Za-z0-9_./-]*';
// A JSON integer that JavaScript holds exactly, spelled as String(n) spells it.
const INT = '0|[1-9][0-9]{0,14}';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
// An IPv4 address as parseIP reads it and formatIP writes it (no leading zeros).
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
// Characters of an IPv6 address; whether it is the canonical spelling is checked after.
const IPV6 = '[0-9a-f:.]{2,45}';
// The inside of a JSON string without escapes or control characters: its text is its value.
const PLAIN = '[^"\\\\\\x00-\\x1f]*';
const PREFIX_LEN = '[0-9]{1,3}';

export const sticky = (source: string) => new RegExp(source, 'y');
const HOLE_RE = new Map<string, RegExp>([NAME, INT, IPV4, IPV6, PLAIN, PREFIX_LEN].map((p) => [p, sticky(p)]));

// Structural pieces, read whole and recorded as literal text.
const LEAF = sticky(
  '\\{"(?:' +
    'payload": \\{"protocol": "(ip6?|th|tcp|udp|sctp)", "field": "(saddr|daddr|dport)"\\}' +
    '|meta": \\{"key": "(l4proto|mark|iifname)"\\}' +
    '|ct": \\{"key": "(state)"\\}' +
    '|fib": \\{"result": "type", "flags": \\["(saddr|daddr)"\\]\\}' +
    ')\\}',
);
const STMT_KIND = sticky('\\{"([a-z]+)": ');
const MATCH_OP = sticky('\\{"op": "(==|!=|in)", "left": ');
const QUOTED_WORD = sticky('"([a-z]+)"');
const VERDICT_WORD = sticky('\\{"(jump|goto|drop|accept|return)": ');
const MARK_OP = sticky('\\{"key": \\{"meta": \\{"key": "mark"\\}\\}, "value": \\{"(\\||\\^)": \\[\\{"meta": \\{"key": "mark"\\}\\}, ');

/** A piece of a rule's text: written as is, or made from captured values. */
export type Part = string | { hole: number; as: 'raw' | 'v6' | 'mark' } | { prefix: [number, number]; v6: boolean };

/** What the right-hand side of a match may be, from what its left reads. */
const enum Left {
  Addr4, // ip saddr/daddr
  Addr6, // ip6 saddr/daddr
  Port, // any dport
  L4proto,
  CtState,
  Fib,
  Masked, // mark and MASK
  Other, // only a set reference (a concat, numgen, th saddr, mark, iifname ...)
}

/** A shape learnt: the item's expression and how its text is made. */
export interface Shape {
  re: RegExp;
  chain: number;
  handle: number;
  comment: number; // 0: the shape has no comment
  text: Part[];
  /** The shape of the rule that followed one of this shape last. */
  next?: Shape;
}

/** A rule read: its chain, handle, comment and text, and where its item ends. */
export interface ListedRule {
  family: Family;
  chain: string;
  handle: number;
  comment: string | undefined;
  text: string;
  end: number;
}

/** The text of a shape from its captured values; null when a value is not canonical. */
export function textOf(parts: Part[], values: ArrayLike<string>): string | null {
  let text = '';
  for (const p of parts) {
    if (typeof p === 'string') text += p;
    else if ('hole' in p) {
      const v = values[p.hole];
      if (p.as === 'raw') text += v;
      else if (p.as === 'mark') text += markHex(Number(v));
      else {
        const c = canonicalV6(v);
        if (c === null) return null;
        text += c;
      }
    } else {
      const prefix = canonicalPrefix(values[p.prefix[0]], values[p.prefix[1]], p.v6);
      if (prefix === null) return null;
      text += prefix;
    }
  }
  return text;
}

/** The address when it is an IPv6 address in the spelling formatIP writes; else null. */
function canonicalV6(s: string): string | null {
  const ip = parseIP(s);
  return ip && ip.family === 6 && formatIP(ip) === s ? s : null;
}

/** `addr/len` when it reads and prints as itself (canonical, host bits clear) and is shorter than an address. */
function canonicalPrefix(addr: string, len: string, v6: boolean): string | null {
  const text = `${addr}/${len}`;
  const c = parseCIDR(text);
  return c && c.cidr.addr.family === (v6 ? 6 : 4) && c.cidr.prefix < (v6 ? 128 : 32) && formatCIDR(c.cidr) === text ? text : null;
}

const escapeRe = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/**
 * Reads one rule item statement by statement, and records the reading as a shape: the
 * text read as literal pieces of a regular expression, the values as captures, and the
 * rule's text as pieces and captures. Every method returns the parts of the text it read,
 * or null when what is there is not read here.
 */
export class Recorder {
  source = '';
  private groups = 0;
  private readonly values: string[] = [''];
  private left: Left = Left.Other;

  constructor(
    private readonly s: string,
    private at: number,
    private readonly family: Family,
  ) {}

  item(head: string): { rule: ListedRule; shape: Omit<Shape, 're'> } | null {
    if (!this.lit(head)) return null;
    const chain = this.hole(PLAIN);
    if (chain === null || !this.lit('", "handle": ')) return null;
    const handle = this.hole(INT);
    if (handle === null) return null;
    let comment = 0;
    if (this.lit(', "comment": "')) {
      const c = this.hole(PLAIN);
      if (c === null || !this.lit('"')) return null;
      comment = c;
    }
    if (!this.lit(', "expr": [')) return null;
    const text = this.stmts();
    if (text === null || !this.lit(']}}')) return null;
    const v = this.values;
    const read = textOf(text, v);
    if (read === null) return null;
    return {
      rule: { family: this.family, chain: v[chain], handle: Number(v[handle]), comment: comment > 0 ? v[comment] : undefined, text: read, end: this.at },
      shape: { chain, handle, comment, text },
    };
  }

  /** Literal text, recorded as such. */
  private lit(text: string): boolean {
    if (!this.s.startsWith(text, this.at)) return false;
    this.at += text.length;
    this.source += escapeRe(text);
    return true;
  }

  /** A structural piece read by a regular expression, recorded as the literal text it read. */
  private piece(re: RegExp): RegExpExecArray | null {
    re.lastIndex = this.at;
    const m = re.exec(this.s);
    if (!m) return null;
    this.at = re.lastIndex;
    this.source += escapeRe(m[0]);
    return m;
  }

  /** A value, recorded as a capture; its group number. */
  private hole(pattern: string): number | null {
    const re = HOLE_RE.get(pattern)!;
    re.lastIndex = this.at;
    const m = re.exec(this.s);
    if (!m) return null;
    this.at = re.lastIndex;
    this.source += `(${pattern})`;
    this.values.push(m[0]);
    return ++this.groups;
  }

  private stmts(): Part[] | null {
    return this.list(() => this.stmt(), ' ');
  }

  /** Items separated by ", " in the listing, their texts joined by `joiner`. */
  private list(item: () => Part[] | null, joiner: string): Part[] | null {
    const text = item();
    if (text === null) return null;
    while (this.lit(', ')) {
      const next = item();
      if (next === null) return null;
      text.push(joiner, ...next);
    }
    return text;
  }

  private stmt(): Part[] | null {
    const kind = this.piece(STMT_KIND);
    if (!kind) return null;
    switch (kind[1]) {
      case 'match':
        return this.matchStmt();
      case 'jump':
      case 'goto':
      case 'drop':
      case 'accept':
      case 'return':
        return this.verdictBody(kind[1]);
      case 'dnat':
        return this.dnat();
      case 'set': {
        if (!this.lit('{"op": "update", "elem": ')) return null;
        const key = this.expr();
        if (key === null || !this.lit(', "set": "@')) return null;
        const set = this.hole(NAME);
        return set !== null && this.lit('"}}') ? ['update @', { hole: set, as: 'raw' }, ' { ', ...key, ' }'] : null;
      }
      case 'vmap':
        return this.vmap();
      case 'mangle': {
        const m = this.piece(MARK_OP);
        const value = m && this.hole(INT);
        return value !== null && this.lit(']}}}') ? [`mark set mark ${m![1] === '|' ? 'or' : 'xor'} `, { hole: value, as: 'mark' }] : null;
      }
      case 'masquerade':
        if (this.lit('null}')) return ['masquerade'];
        return this.lit('{"flags": "fully-random"}}') ? ['masquerade fully-random'] : null;
      case 'reject':
        return this.lit(`{"type": "${this.family === 'ip6' ? 'icmpv6' : 'icmp'}", "expr": "port-unreachable"}}`) ? ['reject'] : null;
    }
    return null;
  }

  /** A verdict's body, after `{"KIND": `. */
  private verdictBody(kind: string): Part[] | null {
    if (kind !== 'jump' && kind !== 'goto') return this.lit('null}') ? [kind] : null;
    if (!this.lit('{"target": "')) return null;
    const target = this.hole(NAME);
    return target !== null && this.lit('"}}') ? [`${kind} `, { hole: target, as: 'raw' }] : null;
  }

  /** One expression; sets this.left. */
  private expr(): Part[] | null {
    const leaf = this.piece(LEAF);
    if (leaf) {
      if (leaf[1] !== undefined) {
        const [, proto, field] = leaf;
        this.left = field === 'dport' ? Left.Port : proto === 'ip' ? Left.Addr4 : proto === 'ip6' ? Left.Addr6 : Left.Other;
        return [`${proto} ${field}`];
      }
      if (leaf[3] !== undefined) {
        this.left = leaf[3] === 'l4proto' ? Left.L4proto : Left.Other;
        return [leaf[3] === 'l4proto' ? 'meta l4proto' : leaf[3]];
      }
      if (leaf[4] !== undefined) {
        this.left = Left.CtState;
        return ['ct state'];
      }
      this.left = Left.Fib;
      return [`fib ${leaf[5]} type`];
    }
    if (this.lit('{"numgen": {"mode": "random", "mod": ')) {
      const mod = this.hole(INT);
      // Compared with a number, as a port is (`numgen random mod K 0`: fast-load's endpoint choice).
      this.left = Left.Port;
      return mod !== null && this.lit(', "offset": 0}}') ? ['numgen random mod ', { hole: mod, as: 'raw' }] : null;
    }
    if (this.lit('{"concat": [')) {
      const text = this.list(() => this.expr(), ' . ');
      if (text === null) return null;
      this.left = Left.Other;
      return this.lit(']}') ? text : null;
    }
    if (this.lit('{"&": [')) {
      const inner = this.expr();
      if (inner === null || !this.lit(', ')) return null;
      const mask = this.hole(INT);
      this.left = Left.Masked;
      return mask !== null && this.lit(']}') ? [...inner, ' and ', { hole: mask, as: 'mark' }] : null;
    }
    return null;
  }

  private matchStmt(): Part[] | null {
    const opMatch = this.piece(MATCH_OP);
    if (!opMatch) return null;
    const left = this.expr();
    if (left === null || !this.lit(', "right": ')) return null;
    // nft lists `ct state new` with the operator "in", and only that one.
    const op = opMatch[1];
    if ((op === 'in') !== (this.left === Left.CtState) && op !== '!=') return null;
    const right = this.value();
    if (right === null || !this.lit('}}')) return null;
    if (this.left === Left.Masked) return [...left, ` ${op} `, ...right];
    return op === '!=' ? [...left, ' != ', ...right] : [...left, ' ', ...right];
  }

  /** The right-hand side of a match, for the left just read. */
  private value(): Part[] | null {
    if (this.lit('"@')) {
      const ref = this.hole(NAME);
      return ref !== null && this.lit('"') ? ['@', { hole: ref, as: 'raw' }] : null;
    }
    switch (this.left) {
      case Left.Addr4:
      case Left.Addr6:
        return this.addressValue(this.left === Left.Addr6);
      case Left.Port:
      case Left.Masked: {
        const n = this.hole(INT);
        return n === null ? null : [{ hole: n, as: 'raw' }];
      }
      case Left.L4proto:
      case Left.CtState:
      case Left.Fib: {
        const m = this.piece(QUOTED_WORD);
        const want = this.left === Left.CtState ? /^new$/ : this.left === Left.Fib ? /^local$/ : /^(tcp|udp|sctp)$/;
        return m && want.test(m[1]) ? [m[1]] : null;
      }
    }
    return null;
  }

  /** An address, a prefix, or an anonymous set of them (`{ a , b }`, in the listing's order). */
  private addressValue(v6: boolean): Part[] | null {
    if (!this.lit('{"set": [')) return this.address(v6);
    const text: Part[] = ['{ '];
    for (;;) {
      const item = this.address(v6);
      if (item === null) return null;
      text.push(...item);
      if (this.lit(']}')) return [...text, ' }'];
      if (!this.lit(', ')) return null;
      text.push(' , ');
    }
  }

  /** One address or a prefix (never a full-length one: nft lists that as an address). */
  private address(v6: boolean): Part[] | null {
    const ip = v6 ? IPV6 : IPV4;
    if (this.lit('"')) {
      const a = this.hole(ip);
      return a !== null && this.lit('"') ? [{ hole: a, as: v6 ? 'v6' : 'raw' }] : null;
    }
    if (!this.lit('{"prefix": {"addr": "')) return null;
    const addr = this.hole(ip);
    if (addr === null || !this.lit('", "len": ')) return null;
    const len = this.hole(PREFIX_LEN);
    return len !== null && this.lit('}}') ? [{ prefix: [addr, len], v6 }] : null;
  }

  private dnat(): Part[] | null {
    if (!this.lit('{"addr": "')) return null;
    // The address first as IPv4; an IPv6 one (dnat to [addr]:port) when it is not.
    const at = this.at;
    const source = this.source;
    let v6 = false;
    let addr = this.hole(IPV4);
    if (addr === null || !this.s.startsWith('"', this.at)) {
      if (addr !== null) this.unhole(at, source);
      v6 = true;
      addr = this.hole(IPV6);
    }
    if (addr === null || !this.lit('", "port": ')) return null;
    const port = this.hole(INT);
    if (port === null || !this.lit('}}')) return null;
    const a: Part = { hole: addr, as: v6 ? 'v6' : 'raw' };
    return v6 ? ['dnat to [', a, ']:', { hole: port, as: 'raw' }] : ['dnat to ', a, ':', { hole: port, as: 'raw' }];
  }

  /** Takes back the last capture. */
  private unhole(at: number, source: string): void {
    this.at = at;
    this.source = source;
    this.values.pop();
    this.groups--;
  }

  private vmap(): Part[] | null {
    if (!this.lit('{"key": ')) return null;
    // A literal map of verdicts has numgen itself as its key (not part of a concat).
    if (this.lit('{"numgen": {"mode": "random", "mod": ')) {
      const mod = this.hole(INT);
      if (mod === null || !this.lit(', "offset": 0}}, "data": ')) return null;
      const key: Part[] = ['numgen random mod ', { hole: mod, as: 'raw' }];
      if (this.lit('"@')) return this.mapRef(key);
      if (!this.lit('{"set": [')) return null;
      const text: Part[] = [...key, ' vmap { '];
      for (let i = 0; ; i++) {
        if (!this.lit(`[${i}, `)) return null;
        const v = this.piece(VERDICT_WORD);
        const verdict = v && this.verdictBody(v[1]);
        if (!verdict || !this.lit(']')) return null;
        text.push(`${i} : `, ...verdict);
        if (this.lit(']}}}')) return [...text, ' }'];
        if (!this.lit(', ')) return null;
        text.push(' , ');
      }
    }
    const key = this.expr();
    return key !== null && this.lit(', "data": "@') ? this.mapRef(key) : null;
  }

  /** `KEY vmap @map`, after the map's `"@`. */
  private mapRef(key: Part[]): Part[] | null {
    const map = this.hole(NAME);
    return map !== null && this.lit('"}}') ? [...key, ' vmap @', { hole: map, as: 'raw' }] : null;
  }
}
