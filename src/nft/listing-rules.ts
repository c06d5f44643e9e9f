// A rule of our table as nft 1.0.6 lists it, read straight from the listing's text into
// the text ruleBodyText prints for it: no JSON.parse, no statement objects, no writing back.
// A 10,000-Service listing holds a quarter of a million rules, and reading each into
// objects, writing it back in canonical form to check it, and printing it cost more than
// compiling the whole snapshot.
//
// Only the exact spelling nft prints for what kproxc writes is read here (its key order,
// its spacing, names and comments without escapes, canonical addresses), and for each of
// those the text is what json-read.ts and text.ts together make of it. Anything else
// (ranges, interface names, a hand-made counter, another nft's spelling) is null, and the
// rule is read the long way, as JSON.
//
// A large listing has few shapes of rules (22 at 10,000 Services) that differ only in
// names, addresses and numbers. The first rule of each shape is read statement by
// statement; that reading is recorded as a shape: one regular expression for the whole
// item, its values captured, and how the text is made of them. Later rules of the shape
// are read with that one expression.
import { formatCIDR, formatIP, parseCIDR, parseIP } from '../net/ip.js';
import type { Family } from './expr.js';
import { markHex } from './text.js';

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

const sticky = (source: string) => new RegExp(source, 'y');
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
type Part = string | { hole: number; as: 'raw' | 'v6' | 'mark' } | { prefix: [number, number]; v6: boolean };

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
interface Shape {
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

// Shapes kept at most; a listing with more reads the rest statement by statement.
const MAX_SHAPES = 256;
// Rules are sorted into groups by this many characters of their statements: enough to
// tell most shapes apart, before most values.
const SIGNATURE_CHARS = 40;
const EXPR = '"expr": [';
const FAMILY_END = '{"rule": {"family": "ip'.length;
const QUOTE = 0x22;

/** Reads the rules of one table; learns their shapes as it goes. */
export class ListingRuleReader {
  /** Every shape, the most used first. */
  private readonly shapes: Shape[] = [];
  /** Shapes by the start of their statements (the first rule's), the most used first. */
  private readonly bySignature = new Map<string, Shape[]>();
  private readonly heads: Record<Family, string>;
  /** The shape of the last rule read by a shape. */
  private last?: Shape;

  constructor(tableName: string) {
    const head = (f: Family) => `{"rule": {"family": "${f}", "table": ${JSON.stringify(tableName)}, "chain": "`;
    this.heads = { ip: head('ip'), ip6: head('ip6') };
  }

  /** The rule item at `pos` when it is a rule of our table that is read here; else null. */
  item(s: string, pos: number): ListedRule | null {
    // The family from the characters after `{"rule": {"family": "ip`; the rest of the head
    // (our table) is part of every shape, and read first by the recorder.
    const family: Family = s.charCodeAt(pos + FAMILY_END) === QUOTE ? 'ip' : 'ip6';
    // Rules of a kind come in the same order chain after chain (an endpoint chain's two
    // rules, then the next chain's): the shape that followed the last one's last time is
    // tried first, without looking for the statements' start.
    const next = this.last?.next;
    const predicted = next ? readByShape(s, pos, family, next) : null;
    if (predicted) {
      this.last = next;
      return predicted;
    }
    const expr = s.indexOf(EXPR, pos);
    const signature = expr < 0 ? '' : s.slice(expr + EXPR.length, expr + EXPR.length + SIGNATURE_CHARS);
    // The shapes of that start first; then all (a value within the signature, such as a
    // jump's target, sends a rule of a known shape here).
    const read = this.byShape(s, pos, family, this.bySignature.get(signature)) ?? this.byShape(s, pos, family, this.shapes);
    if (read) return read;
    const rec = new Recorder(s, pos, family);
    const recorded = rec.item(this.heads[family]);
    if (!recorded) return null;
    if (this.shapes.length < MAX_SHAPES) {
      const shape: Shape = { re: sticky(rec.source), ...recorded.shape };
      this.shapes.push(shape);
      const group = this.bySignature.get(signature);
      if (group) group.push(shape);
      else this.bySignature.set(signature, [shape]);
      this.follow(shape);
    }
    return recorded.rule;
  }

  /** `shape` read the rule after the last one's: it is what is tried first after that one. */
  private follow(shape: Shape): void {
    if (this.last) this.last.next = shape;
    this.last = shape;
  }

  private byShape(s: string, pos: number, family: Family, shapes: Shape[] | undefined): ListedRule | null {
    for (let k = 0; shapes && k < shapes.length; k++) {
      const shape = shapes[k];
      const read = readByShape(s, pos, family, shape);
      if (!read) continue;
      // The shapes most used move to the front.
      if (k > 0) [shapes[k - 1], shapes[k]] = [shape, shapes[k - 1]];
      this.follow(shape);
      return read;
    }
    return null;
  }
}

/** The rule item at `pos` read by one shape; null when it is not of that shape. */
function readByShape(s: string, pos: number, family: Family, shape: Shape): ListedRule | null {
  shape.re.lastIndex = pos;
  const m = shape.re.exec(s);
  const text = m && textOf(shape.text, m);
  if (!m || text === null) return null;
  const comment = shape.comment > 0 ? m[shape.comment] : undefined;
  return { family, chain: m[shape.chain], handle: Number(m[shape.handle]), comment, text, end: shape.re.lastIndex };
}

/** The text of a shape from its captured values; null when a value is not canonical. */
function textOf(parts: Part[], values: ArrayLike<string>): string | null {
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
class Recorder {
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
