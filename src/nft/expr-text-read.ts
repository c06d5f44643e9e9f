// nft text of what statements are made of (expressions, values and verdicts, as expr-text.ts
// prints them) read back, word by word. The statement kinds (stmt/*.ts) read themselves with
// these, and text-read.ts finds a statement's kind; so this module imports nothing that
// imports the kinds, and any of them may be loaded first.
import { assertNever } from '../diag/diagnostic.js';
import { parseCIDR, parseIP } from '../net/ip.js';
import { ctValue, type Expr, type Value, type Verdict } from './expr.js';
import { markHex } from './expr-text.js';

type PayloadProto = Extract<Expr, { t: 'payload' }>['proto'];
const PAYLOAD_PROTOS: readonly string[] = ['ip', 'ip6', 'th', 'tcp', 'udp', 'sctp'];
const PAYLOAD_FIELDS: readonly string[] = ['saddr', 'daddr', 'dport'];
const L4_PROTOS: readonly string[] = ['tcp', 'udp', 'sctp'];

/** The words of a rule's text, read one by one; `at` is where, set back to try another kind. */
export class Tokens {
  at = 0;
  constructor(private readonly words: string[]) {}
  get done(): boolean {
    return this.at >= this.words.length;
  }
  peek(k = 0): string | undefined {
    return this.words[this.at + k];
  }
  next(): string {
    if (this.at >= this.words.length) throw NOT_OURS;
    return this.words[this.at++];
  }
  expect(word: string): void {
    if (this.next() !== word) throw NOT_OURS;
  }
}

// Thrown inside the reader only (and the kinds' fromText); readRuleText (text-read.ts) turns
// it into null.
export const NOT_OURS = new Error('not text kproxc prints');

export function number(word: string): number {
  const n = Number(word);
  if (!Number.isFinite(n) || String(n) !== word) throw NOT_OURS;
  return n;
}

export function hex(word: string): number {
  if (!/^0x[0-9a-f]+$/.test(word)) throw NOT_OURS;
  const n = parseInt(word.slice(2), 16);
  if (markHex(n) !== word) throw NOT_OURS;
  return n;
}

export function name(word: string): string {
  if (word === '') throw NOT_OURS;
  return word;
}

export function verdict(t: Tokens): Verdict {
  const kind = t.next();
  if (kind === 'jump' || kind === 'goto') return { kind, target: name(t.next()) };
  if (kind === 'drop' || kind === 'accept' || kind === 'return') return { kind };
  throw NOT_OURS;
}

function primary(t: Tokens): Expr {
  const w = t.next();
  if (PAYLOAD_PROTOS.includes(w)) {
    const field = t.next();
    if (!PAYLOAD_FIELDS.includes(field)) throw NOT_OURS;
    return { t: 'payload', proto: w as PayloadProto, field: field as 'saddr' | 'daddr' | 'dport' };
  }
  switch (w) {
    case 'meta':
      t.expect('l4proto');
      return { t: 'meta', key: 'l4proto' };
    case 'mark':
      return { t: 'meta', key: 'mark' };
    case 'iifname':
      return { t: 'meta', key: 'iifname' };
    case 'ct': {
      const key = t.next();
      if (key === 'state' || key === 'status' || key === 'direction') return { t: 'ct', key };
      if (key !== 'original') throw NOT_OURS;
      const field = t.next();
      if (field === 'proto-dst') return { t: 'ct-original', key: field };
      if (field !== 'ip' && field !== 'ip6') throw NOT_OURS;
      t.expect('daddr');
      return { t: 'ct-original', key: `${field} daddr` };
    }
    case 'jhash': {
      const key = expr(t);
      t.expect('mod');
      const mod = number(t.next());
      t.expect('seed');
      const word = t.next();
      const seed = parseInt(word.slice(2), 16);
      // nft prints the seed in hex without padding: 0x0, 0x2a.
      if (!/^0x[0-9a-f]+$/.test(word) || `0x${seed.toString(16)}` !== word) throw NOT_OURS;
      return { t: 'jhash', key, mod, seed };
    }
    case 'fib': {
      const flag = t.next();
      if (flag !== 'saddr' && flag !== 'daddr') throw NOT_OURS;
      t.expect('type');
      return { t: 'fib', flag, result: 'type' };
    }
    case 'numgen':
      t.expect('random');
      t.expect('mod');
      return numgenRest(t, number(t.next()));
  }
  throw NOT_OURS;
}

/** A numgen's optional `offset C` (0 is printed without it). */
function numgenRest(t: Tokens, mod: number): Expr {
  if (t.peek() !== 'offset') return { t: 'numgen', mod };
  t.next();
  const offset = number(t.next());
  return offset === 0 ? { t: 'numgen', mod } : { t: 'numgen', mod, offset };
}

/** `a . b . c`, then an optional `and MASK`. */
export function expr(t: Tokens): Expr {
  const parts = [primary(t)];
  while (t.peek() === '.') {
    t.next();
    parts.push(primary(t));
  }
  const e: Expr = parts.length === 1 ? parts[0] : { t: 'concat', parts };
  if (t.peek() !== 'and') return e;
  t.next();
  return { t: 'and', left: e, mask: hex(t.next()) };
}

function address(word: string): Value {
  if (word.includes('/')) {
    const c = parseCIDR(word);
    if (!c) throw NOT_OURS;
    return { t: 'prefix', cidr: c.cidr };
  }
  const ip = parseIP(word);
  if (!ip) throw NOT_OURS;
  return { t: 'ip', ip };
}

/** The right-hand side of a match: what it may be depends on the left, as live/checked/json.ts reads it. */
export function value(t: Tokens, left: Expr): Value {
  const w = t.next();
  if (w.startsWith('@')) return { t: 'setref', name: name(w.slice(1)) };
  switch (left.t) {
    case 'ct': {
      const flag = ctValue(left.key, w);
      if (!flag) throw NOT_OURS;
      return { t: 'sym', s: flag };
    }
    case 'ct-original':
      if (left.key === 'proto-dst') return { t: 'num', n: number(w) };
      return w === '{' ? anonymousSet(t) : address(w);
    case 'jhash':
      return { t: 'num', n: number(w) };
    case 'fib':
      if (w !== 'local') throw NOT_OURS;
      return { t: 'sym', s: 'local' };
    case 'meta':
      if (left.key === 'l4proto' && L4_PROTOS.includes(w)) return { t: 'sym', s: w as 'tcp' | 'udp' | 'sctp' };
      if (left.key === 'iifname' && w.length > 2 && w.startsWith('"') && w.endsWith('"')) return { t: 'str', s: w.slice(1, -1) };
      throw NOT_OURS;
    case 'payload':
      if (left.field === 'dport') return { t: 'num', n: number(w) };
      if (w !== '{') return address(w);
      return anonymousSet(t);
    case 'and':
    case 'numgen': // `numgen random mod K 0`: the fast-load layout's endpoint choice
      return { t: 'num', n: number(w) };
    case 'concat':
      throw NOT_OURS;
    default:
      return assertNever(left, 'expression kind');
  }
}

/** `{ a , b , c }` after its opening brace. */
function anonymousSet(t: Tokens): Value {
  const items: Value[] = [];
  for (;;) {
    items.push(address(t.next()));
    const sep = t.next();
    if (sep === '}') return { t: 'anonset', items };
    if (sep !== ',') throw NOT_OURS;
  }
}
