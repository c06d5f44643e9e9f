// A rule body in kproxc's own nft text (text.ts, ruleBodyText) read back into statements:
// the inverse of the printer, for the few rules whose comparison needs their statements.
// A table built for printing keeps only each rule's text, and the live listing is turned
// into the same text, so most rules are compared as text; rules whose texts differ are
// compared by key (canonical.ts), which is made from the statements read here.
//
// Only what text.ts prints is understood, and a reading counts only if printing it gives
// back the very same text; anything else is null.
import { parseCIDR, parseIP } from '../net/ip.js';
import type { Expr, Stmt, Value, Verdict } from './expr.js';
import { markHex, ruleBodyText } from './text.js';

type PayloadProto = Extract<Expr, { t: 'payload' }>['proto'];
const PAYLOAD_PROTOS: readonly string[] = ['ip', 'ip6', 'th', 'tcp', 'udp', 'sctp'];
const PAYLOAD_FIELDS: readonly string[] = ['saddr', 'daddr', 'dport'];
const L4_PROTOS: readonly string[] = ['tcp', 'udp', 'sctp'];

class Tokens {
  private i = 0;
  constructor(private readonly words: string[]) {}
  get done(): boolean {
    return this.i >= this.words.length;
  }
  peek(k = 0): string | undefined {
    return this.words[this.i + k];
  }
  next(): string {
    if (this.i >= this.words.length) throw NOT_OURS;
    return this.words[this.i++];
  }
  expect(word: string): void {
    if (this.next() !== word) throw NOT_OURS;
  }
}

// Thrown inside the reader only; readRuleText turns it into null.
const NOT_OURS = new Error('not text kproxc prints');

function number(word: string): number {
  const n = Number(word);
  if (!Number.isFinite(n) || String(n) !== word) throw NOT_OURS;
  return n;
}

function hex(word: string): number {
  if (!/^0x[0-9a-f]+$/.test(word)) throw NOT_OURS;
  const n = parseInt(word.slice(2), 16);
  if (markHex(n) !== word) throw NOT_OURS;
  return n;
}

function name(word: string): string {
  if (word === '') throw NOT_OURS;
  return word;
}

function verdict(t: Tokens): Verdict {
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
    case 'ct':
      t.expect('state');
      return { t: 'ct', key: 'state' };
    case 'fib': {
      const flag = t.next();
      if (flag !== 'saddr' && flag !== 'daddr') throw NOT_OURS;
      t.expect('type');
      return { t: 'fib', flag, result: 'type' };
    }
    case 'numgen':
      t.expect('random');
      t.expect('mod');
      return { t: 'numgen', mod: number(t.next()) };
  }
  throw NOT_OURS;
}

/** `a . b . c`, then an optional `and MASK`. */
function expr(t: Tokens): Expr {
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
function value(t: Tokens, left: Expr): Value {
  const w = t.next();
  if (w.startsWith('@')) return { t: 'setref', name: name(w.slice(1)) };
  switch (left.t) {
    case 'ct':
      if (w !== 'new') throw NOT_OURS;
      return { t: 'sym', s: 'new' };
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
  }
  throw NOT_OURS;
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

function numgenVmap(t: Tokens, mod: number): Stmt {
  t.expect('{');
  const targets: Verdict[] = [];
  for (;;) {
    if (number(t.next()) !== targets.length) throw NOT_OURS;
    t.expect(':');
    targets.push(verdict(t));
    const sep = t.next();
    if (sep === '}') return { t: 'numgen-vmap', mod, targets };
    if (sep !== ',') throw NOT_OURS;
  }
}

function statement(t: Tokens): Stmt {
  const w = t.peek();
  switch (w) {
    case 'jump':
    case 'goto':
    case 'drop':
    case 'accept':
    case 'return':
      return { t: 'verdict', v: verdict(t) };
    case 'masquerade':
      t.next();
      if (t.peek() !== 'fully-random') return { t: 'masquerade', fullyRandom: false };
      t.next();
      return { t: 'masquerade', fullyRandom: true };
    case 'reject':
      t.next();
      return { t: 'reject' };
    case 'dnat':
      return dnat(t);
    case 'update': {
      t.next();
      const set = t.next();
      if (!set.startsWith('@')) throw NOT_OURS;
      t.expect('{');
      const key = expr(t);
      t.expect('}');
      return { t: 'update', set: name(set.slice(1)), key };
    }
    case 'mark':
      if (t.peek(1) === 'set') {
        t.next();
        t.next();
        t.expect('mark');
        const op = t.next();
        if (op !== 'or' && op !== 'xor') throw NOT_OURS;
        return { t: 'mark-set', op, value: hex(t.next()) };
      }
      break;
  }
  const left = expr(t);
  if (t.peek() === 'vmap') {
    t.next();
    if (t.peek() === '{') {
      if (left.t !== 'numgen') throw NOT_OURS;
      return numgenVmap(t, left.mod);
    }
    const map = t.next();
    if (!map.startsWith('@')) throw NOT_OURS;
    return { t: 'vmap', key: left, map: name(map.slice(1)) };
  }
  let op: '==' | '!=' = '==';
  if (t.peek() === '!=' || (left.t === 'and' && t.peek() === '==')) op = t.next() as '==' | '!=';
  return { t: 'match', left, op, right: value(t, left) };
}

function dnat(t: Tokens): Stmt {
  t.next();
  t.expect('to');
  const w = t.next();
  const v6 = /^\[(.+)\]:([0-9]+)$/.exec(w);
  const v4 = v6 ? null : /^([^:]+):([0-9]+)$/.exec(w);
  const m = v6 ?? v4;
  const ip = m ? parseIP(m[1]) : null;
  if (!m || !ip || (ip.family === 6) !== (v6 !== null)) throw NOT_OURS;
  return { t: 'dnat', ip, port: number(m[2]) };
}

/** The statements of a rule body that ruleBodyText printed; null when it is not such text. */
export function readRuleText(text: string): Stmt[] | null {
  const t = new Tokens(text.split(' '));
  const stmts: Stmt[] = [];
  try {
    while (!t.done) stmts.push(statement(t));
    if (stmts.length === 0 || ruleBodyText(stmts) !== text) return null;
  } catch (e) {
    if (e === NOT_OURS) return null;
    throw e;
  }
  return stmts;
}
