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
import { markHex } from '../../nft/expr-text.js';
import { INT, IPV4, IPV6, Left, NAME, PLAIN, PREFIX_LEN, sticky } from './patterns.js';
import { listingReaders } from './stmt-listing.js';

export { sticky };

const HOLE_RE = new Map<string, RegExp>([NAME, INT, IPV4, IPV6, PLAIN, PREFIX_LEN].map((p) => [p, sticky(p)]));

// Structural pieces, read whole and recorded as literal text.
const LEAF = sticky(
  '\\{"(?:' +
    'payload": \\{"protocol": "(ip6?|th|tcp|udp|sctp)", "field": "(saddr|daddr|dport)"\\}' +
    '|meta": \\{"key": "(l4proto|mark|iifname)"\\}' +
    '|ct": \\{"key": "(state|status)"\\}' +
    '|fib": \\{"result": "type", "flags": \\["(saddr|daddr)"\\]\\}' +
    ')\\}',
);
const STMT_KIND = sticky('\\{"([a-z]+)": ');
const QUOTED_WORD = sticky('"([a-z]+)"');
/** The words a match compares each of these with. */
const WORDS = {
  [Left.L4proto]: /^(tcp|udp|sctp)$/,
  [Left.CtState]: /^new$/,
  [Left.CtStatus]: /^dnat$/,
  [Left.Fib]: /^local$/,
};

/**
 * A piece of a rule's text: written as is, or made from captured values. An `offset` hole
 * is a numgen's ` offset C`, nothing for 0 (as nft's own text has it): a shape learnt from a
 * rule with an offset also reads the rules of that shape with none.
 */
export type Part = string | { hole: number; as: 'raw' | 'v6' | 'mark' | 'offset' } | { prefix: [number, number]; v6: boolean };

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
      else if (p.as === 'offset') text += v === '0' ? '' : ` offset ${v}`;
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
  /** What the expression read last is, for the match it is the left of. */
  left: Left = Left.Other;

  constructor(
    private readonly s: string,
    private at: number,
    readonly family: Family,
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
  lit(text: string): boolean {
    if (!this.s.startsWith(text, this.at)) return false;
    this.at += text.length;
    this.source += escapeRe(text);
    return true;
  }

  /** A structural piece read by a regular expression, recorded as the literal text it read. */
  piece(re: RegExp): RegExpExecArray | null {
    re.lastIndex = this.at;
    const m = re.exec(this.s);
    if (!m) return null;
    this.at = re.lastIndex;
    this.source += escapeRe(m[0]);
    return m;
  }

  /** A value, recorded as a capture; its group number. */
  hole(pattern: string): number | null {
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

  /** One statement: the kinds its key names (stmt-listing.ts), tried in turn. */
  private stmt(): Part[] | null {
    const kind = this.piece(STMT_KIND);
    if (!kind) return null;
    const saved = this.save();
    for (const read of listingReaders(kind[1])) {
      const text = read(this, kind[1]);
      if (text !== null) return text;
      this.restore(saved);
    }
    return null;
  }

  /** Whether the text goes on with `text` (read nothing). */
  ahead(text: string): boolean {
    return this.s.startsWith(text, this.at);
  }

  /** Where the reading is, to come back to with restore. */
  save(): { at: number; source: string; groups: number } {
    return { at: this.at, source: this.source, groups: this.groups };
  }

  /** Takes back what was read since `saved`. */
  restore(saved: { at: number; source: string; groups: number }): void {
    this.at = saved.at;
    this.source = saved.source;
    this.values.length = saved.groups + 1;
    this.groups = saved.groups;
  }

  /** A verdict's body, after `{"KIND": `. */
  verdictBody(kind: string): Part[] | null {
    if (kind !== 'jump' && kind !== 'goto') return this.lit('null}') ? [kind] : null;
    if (!this.lit('{"target": "')) return null;
    const target = this.hole(NAME);
    return target !== null && this.lit('"}}') ? [`${kind} `, { hole: target, as: 'raw' }] : null;
  }

  /** One expression; sets this.left. */
  expr(): Part[] | null {
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
        this.left = leaf[4] === 'state' ? Left.CtState : Left.CtStatus;
        return [`ct ${leaf[4]}`];
      }
      this.left = Left.Fib;
      return [`fib ${leaf[5]} type`];
    }
    if (this.lit('{"numgen": {"mode": "random", "mod": ')) {
      const mod = this.hole(INT);
      // Compared with a number, as a port is (`numgen random mod K 0`: fast-load's endpoint choice).
      this.left = Left.Port;
      if (mod === null || !this.lit(', "offset": ')) return null;
      if (this.lit('0}}')) return ['numgen random mod ', { hole: mod, as: 'raw' }];
      // `numgen random mod K offset C`: a draw in its own range, or (K = 1) a constant in a key.
      const offset = this.hole(INT);
      return offset !== null && this.lit('}}') ? ['numgen random mod ', { hole: mod, as: 'raw' }, { hole: offset, as: 'offset' }] : null;
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

  /** The right-hand side of a match, for the left just read. */
  value(): Part[] | null {
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
      case Left.CtStatus:
      case Left.Fib: {
        const m = this.piece(QUOTED_WORD);
        return m && WORDS[this.left].test(m[1]) ? [m[1]] : null;
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
}
