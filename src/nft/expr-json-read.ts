// libnftables JSON of what statements are made of (expressions, values and verdicts, as
// `nft -j list ruleset` prints them) read back: the inverse of expr-json.ts. The statement
// kinds (stmt/*.ts) read themselves with these, and json-read.ts finds a statement's kind;
// so this module imports nothing that imports the kinds, and any of them may be loaded first.
import { assertNever } from '../diag/diagnostic.js';
import { parseCIDR, parseIP } from '../net/ip.js';
import { ctValue, type Expr, type Value, type Verdict } from './expr.js';
import type { Json } from './expr-json.js';
import { rangeToCIDRs } from './intervals.js';

export type Obj = { [k: string]: Json };
export const isObj = (j: unknown): j is Obj => j !== null && typeof j === 'object' && !Array.isArray(j);

const PAYLOAD_PROTOS = ['ip', 'ip6', 'th', 'tcp', 'udp', 'sctp'] as const;
const PAYLOAD_FIELDS = ['saddr', 'daddr', 'dport'] as const;
const META_KEYS = ['l4proto', 'mark', 'iifname'] as const;

export function oneOf<T extends string>(v: Json, allowed: readonly T[]): T | null {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : null;
}

export function readExpr(j: Json): Expr | null {
  if (!isObj(j)) return null;
  if (isObj(j.payload)) {
    const proto = oneOf(j.payload.protocol, PAYLOAD_PROTOS);
    const field = oneOf(j.payload.field, PAYLOAD_FIELDS);
    return proto && field ? { t: 'payload', proto, field } : null;
  }
  if (isObj(j.meta)) {
    const key = oneOf(j.meta.key, META_KEYS);
    return key ? { t: 'meta', key } : null;
  }
  if (isObj(j.ct)) {
    if (j.ct.dir === 'original') {
      const key = oneOf(j.ct.key, ['ip daddr', 'ip6 daddr', 'proto-dst'] as const);
      return key ? { t: 'ct-original', key } : null;
    }
    const key = j.ct.dir === undefined ? oneOf(j.ct.key, ['state', 'status', 'direction'] as const) : null;
    return key ? { t: 'ct', key } : null;
  }
  if (isObj(j.jhash)) {
    const { mod, seed, offset } = j.jhash;
    const key = readExpr(j.jhash.expr);
    const noOffset = offset === undefined || offset === 0;
    return key && typeof mod === 'number' && mod > 0 && typeof seed === 'number' && noOffset ? { t: 'jhash', key, mod, seed } : null;
  }
  if (isObj(j.fib)) {
    const flags = j.fib.flags;
    const flag = Array.isArray(flags) && flags.length === 1 ? oneOf(flags[0], ['saddr', 'daddr'] as const) : null;
    return flag && j.fib.result === 'type' ? { t: 'fib', flag, result: 'type' } : null;
  }
  if (Array.isArray(j.concat)) {
    const parts = j.concat.map(readExpr);
    return parts.every((p) => p !== null) ? { t: 'concat', parts: parts as Expr[] } : null;
  }
  const and = j['&'];
  if (Array.isArray(and) && and.length === 2 && typeof and[1] === 'number') {
    const left = readExpr(and[0]);
    return left ? { t: 'and', left, mask: and[1] } : null;
  }
  if (isObj(j.numgen) && j.numgen.mode === 'random' && typeof j.numgen.mod === 'number') {
    const offset = j.numgen.offset ?? 0;
    if (typeof offset !== 'number') return null;
    return offset === 0 ? { t: 'numgen', mod: j.numgen.mod } : { t: 'numgen', mod: j.numgen.mod, offset };
  }
  return null;
}

/** One address item of a match: an address, a prefix, or a range (as the prefixes covering it). */
function readAddressItems(j: Json): Value[] | null {
  if (typeof j === 'string') {
    const ip = parseIP(j);
    return ip ? [{ t: 'ip', ip }] : null;
  }
  if (!isObj(j)) return null;
  if (isObj(j.prefix) && typeof j.prefix.addr === 'string' && typeof j.prefix.len === 'number') {
    const c = parseCIDR(`${j.prefix.addr}/${j.prefix.len}`);
    return c ? [{ t: 'prefix', cidr: c.cidr }] : null;
  }
  if (Array.isArray(j.range) && j.range.length === 2) {
    const lo = typeof j.range[0] === 'string' ? parseIP(j.range[0]) : null;
    const hi = typeof j.range[1] === 'string' ? parseIP(j.range[1]) : null;
    if (!lo || !hi || lo.family !== hi.family) return null;
    return rangeToCIDRs(lo, hi).map((cidr) => ({ t: 'prefix', cidr }));
  }
  return null;
}

function readAddressValue(j: Json): Value | null {
  if (isObj(j) && Array.isArray(j.set)) {
    const items = j.set.map(readAddressItems);
    if (items.some((i) => i === null)) return null;
    return { t: 'anonset', items: (items as Value[][]).flat() };
  }
  const items = readAddressItems(j);
  if (!items) return null;
  return items.length === 1 ? items[0] : { t: 'anonset', items };
}

/** The right-hand side of a match; what it may be depends on what the left reads. */
export function readValue(left: Expr, j: Json): Value | null {
  if (typeof j === 'string' && j.startsWith('@')) return { t: 'setref', name: j.slice(1) };
  switch (left.t) {
    case 'ct': {
      const flag = ctValue(left.key, j);
      return flag ? { t: 'sym', s: flag } : null;
    }
    case 'ct-original':
      if (left.key === 'proto-dst') return typeof j === 'number' ? { t: 'num', n: j } : null;
      return readAddressValue(j);
    case 'jhash':
      return typeof j === 'number' ? { t: 'num', n: j } : null;
    case 'fib':
      return j === 'local' ? { t: 'sym', s: 'local' } : null;
    case 'meta':
      if (left.key === 'l4proto') {
        const s = oneOf(j, ['tcp', 'udp', 'sctp'] as const);
        return s ? { t: 'sym', s } : null;
      }
      if (left.key === 'iifname') return typeof j === 'string' ? { t: 'str', s: j } : null;
      return null;
    case 'payload':
      if (left.field === 'dport') return typeof j === 'number' ? { t: 'num', n: j } : null;
      return readAddressValue(j);
    case 'and':
    // fast-load's endpoint choice: `numgen random mod K 0 goto ...`.
    case 'numgen':
      return typeof j === 'number' ? { t: 'num', n: j } : null;
    case 'concat':
      return null;
    default:
      return assertNever(left, 'expression kind');
  }
}

export function readVerdict(j: Json): Verdict | null {
  if (!isObj(j) || Object.keys(j).length !== 1) return null;
  const kind = Object.keys(j)[0];
  return readVerdictBody(kind, j[kind]);
}

/** A verdict from its kind (the key of its object) and what is under that key. */
export function readVerdictBody(kind: string, body: Json): Verdict | null {
  if ((kind === 'jump' || kind === 'goto') && isObj(body) && typeof body.target === 'string') {
    return { kind, target: body.target };
  }
  if ((kind === 'drop' || kind === 'accept' || kind === 'return') && body === null) return { kind };
  return null;
}
