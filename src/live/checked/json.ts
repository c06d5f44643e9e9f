// libnftables JSON (as `nft -j list ruleset` prints it) back into our typed objects: the
// inverse of json.ts. Only what kproxc itself writes is understood; anything else throws
// Unreadable, because a diff against an object we cannot read would be a guess.
//
// Statements are read by shape and then checked by writing them back: a rule is understood
// only when stmtJson of what we read is the same rule (canonical.ts) as the listing.
import { parseCIDR, parseIP, type IP } from '../../net/ip.js';
import { canonicalStmt, jsonEquals } from '../../nft/canonical.js';
import type { Expr, Family, Stmt, Value, Verdict } from '../../nft/expr.js';
import { rangeToCIDRs } from '../../nft/intervals.js';
import { stmtJson, type Json } from '../../nft/json.js';
import type { BaseChainSpec, Chain, DataType, Element, Hook, KeyPart, NftSet } from '../../nft/objects.js';

/** A piece of the listing we do not understand; `field` is its path inside the object. */
export class Unreadable extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'Unreadable';
  }
}

type Obj = { [k: string]: Json };
export const isObj = (j: unknown): j is Obj => j !== null && typeof j === 'object' && !Array.isArray(j);

const show = (j: Json) => {
  const s = JSON.stringify(j);
  return s.length > 120 ? s.slice(0, 117) + '...' : s;
};

/** Fails when the object has keys beyond those named: an unknown key is an unknown meaning. */
export function onlyKeys(o: Obj, keys: string[], field?: string): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw new Unreadable(`unexpected key "${k}"`, field);
  }
}

function str(o: Obj, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new Unreadable(`"${key}" must be a string, not ${show(v ?? null)}`, key);
  return v;
}

function int(o: Obj, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Unreadable(`"${key}" must be an integer, not ${show(v ?? null)}`, key);
  return v;
}

function optStr(o: Obj, key: string): string | undefined {
  return o[key] === undefined ? undefined : str(o, key);
}

// ---- statements ----------------------------------------------------------------------

const PAYLOAD_PROTOS = ['ip', 'ip6', 'th', 'tcp', 'udp', 'sctp'] as const;
const PAYLOAD_FIELDS = ['saddr', 'daddr', 'dport'] as const;
const META_KEYS = ['l4proto', 'mark', 'iifname'] as const;

function oneOf<T extends string>(v: Json, allowed: readonly T[]): T | null {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : null;
}

function readExpr(j: Json): Expr | null {
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
  if (isObj(j.ct)) return j.ct.key === 'state' ? { t: 'ct', key: 'state' } : null;
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
  if (isObj(j.numgen) && j.numgen.mode === 'random' && typeof j.numgen.mod === 'number') return { t: 'numgen', mod: j.numgen.mod };
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
function readValue(left: Expr, j: Json): Value | null {
  if (typeof j === 'string' && j.startsWith('@')) return { t: 'setref', name: j.slice(1) };
  switch (left.t) {
    case 'ct':
      return j === 'new' ? { t: 'sym', s: 'new' } : null;
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
      return typeof j === 'number' ? { t: 'num', n: j } : null;
    default:
      return null;
  }
}

export function readVerdict(j: Json): Verdict | null {
  if (!isObj(j) || Object.keys(j).length !== 1) return null;
  const kind = Object.keys(j)[0];
  if ((kind === 'jump' || kind === 'goto') && isObj(j[kind]) && typeof (j[kind] as Obj).target === 'string') {
    return { kind, target: (j[kind] as Obj).target as string };
  }
  if ((kind === 'drop' || kind === 'accept' || kind === 'return') && j[kind] === null) return { kind };
  return null;
}

function readNumgenVmap(key: Json, data: Json): Stmt | null {
  if (!isObj(key) || !isObj(key.numgen) || !isObj(data) || !Array.isArray(data.set)) return null;
  const targets: Verdict[] = [];
  for (const [i, entry] of data.set.entries()) {
    if (!Array.isArray(entry) || entry.length !== 2 || entry[0] !== i) return null;
    const v = readVerdict(entry[1]);
    if (!v) return null;
    targets.push(v);
  }
  return typeof key.numgen.mod === 'number' ? { t: 'numgen-vmap', mod: key.numgen.mod, targets } : null;
}

function readStmtShape(j: Json): Stmt | null {
  const verdict = readVerdict(j);
  if (verdict) return { t: 'verdict', v: verdict };
  if (!isObj(j) || Object.keys(j).length !== 1) return null;
  const [kind] = Object.keys(j);
  const body = j[kind];
  switch (kind) {
    case 'match': {
      if (!isObj(body)) return null;
      const left = readExpr(body.left);
      const right = left && readValue(left, body.right);
      const op = body.op === 'in' ? '==' : body.op;
      return left && right && (op === '==' || op === '!=') ? { t: 'match', left, op, right } : null;
    }
    case 'vmap': {
      if (!isObj(body)) return null;
      if (typeof body.data === 'string' && body.data.startsWith('@')) {
        const key = readExpr(body.key);
        return key ? { t: 'vmap', key, map: body.data.slice(1) } : null;
      }
      return readNumgenVmap(body.key, body.data);
    }
    case 'mangle': {
      if (!isObj(body) || !isObj(body.value)) return null;
      const op = '|' in body.value ? 'or' : '^' in body.value ? 'xor' : null;
      const args = body.value[op === 'or' ? '|' : '^'];
      return op && Array.isArray(args) && typeof args[1] === 'number' ? { t: 'mark-set', op, value: args[1] } : null;
    }
    case 'masquerade':
      return { t: 'masquerade', fullyRandom: isObj(body) && body.flags === 'fully-random' };
    case 'dnat': {
      const ip = isObj(body) && typeof body.addr === 'string' ? parseIP(body.addr) : null;
      return ip && isObj(body) && typeof body.port === 'number' ? { t: 'dnat', ip, port: body.port } : null;
    }
    case 'set':
      if (!isObj(body) || body.op !== 'update' || typeof body.set !== 'string' || !body.set.startsWith('@')) return null;
      return ((key) => (key ? { t: 'update' as const, set: (body.set as string).slice(1), key } : null))(readExpr(body.elem));
    case 'reject':
      return { t: 'reject' };
    default:
      return null;
  }
}

/**
 * A rule's statements. Each must be one kproxc writes, in the form nft lists it: read by
 * shape, then written back and compared, so that nothing is silently dropped or changed.
 * Also returns the canonical form written back, from which the rule's key is made.
 */
export function readStmts(expr: Json, family: Family): { stmts: Stmt[]; canonical: Json[] } {
  if (!Array.isArray(expr) || expr.length === 0) throw new Unreadable('"expr" must be a non-empty array', 'expr');
  const stmts: Stmt[] = [];
  const canonical: Json[] = [];
  expr.forEach((j, i) => {
    const s = readStmtShape(j);
    const c = s && canonicalStmt(stmtJson(s, family));
    if (!s || !jsonEquals(c, canonicalStmt(j))) throw new Unreadable(`statement ${show(j)} is not one kproxc writes`, `expr[${i}]`);
    stmts.push(s);
    canonical.push(c);
  });
  return { stmts, canonical };
}

// ---- chains, sets, elements ----------------------------------------------------------

const HOOKS: readonly Hook[] = ['prerouting', 'input', 'forward', 'output', 'postrouting'];

export function readChain(o: Obj): Chain {
  onlyKeys(o, ['family', 'table', 'name', 'handle', 'type', 'hook', 'prio', 'policy', 'comment']);
  const name = str(o, 'name');
  // nft 1.0.6 does not list chain comments; a later version may, and they are never
  // compared (they cannot be changed without recreating the chain).
  if (o.hook === undefined) {
    if (o.type !== undefined || o.prio !== undefined || o.policy !== undefined) throw new Unreadable('a chain with a type but no hook', 'hook');
    return { name };
  }
  const type = oneOf(o.type, ['filter', 'nat'] as const);
  if (!type) throw new Unreadable(`chain type ${show(o.type ?? null)} is not one kproxc writes`, 'type');
  const hook = oneOf(o.hook, HOOKS);
  if (!hook) throw new Unreadable(`hook ${show(o.hook)} is not one kproxc writes`, 'hook');
  const policy = oneOf(o.policy ?? 'accept', ['accept', 'drop'] as const);
  if (!policy) throw new Unreadable(`policy ${show(o.policy ?? null)} is not one kproxc writes`, 'policy');
  const base: BaseChainSpec = { type, hook, priority: int(o, 'prio'), policy };
  return { name, base };
}

const DATA_TYPES: readonly DataType[] = ['ipv4_addr', 'ipv6_addr', 'inet_proto', 'inet_service'];
const SET_FLAGS = ['dynamic', 'timeout', 'interval'] as const;

export function readSet(kind: 'set' | 'map', o: Obj): NftSet {
  onlyKeys(o, ['family', 'table', 'name', 'handle', 'type', 'map', 'flags', 'timeout', 'size', 'comment', 'elem']);
  const name = str(o, 'name');
  const types = Array.isArray(o.type) ? o.type : [o.type ?? null];
  const keyType = types.map((t) => oneOf(t, DATA_TYPES));
  if (keyType.length === 0 || keyType.some((t) => t === null)) throw new Unreadable(`key type ${show(o.type ?? null)} is not one kproxc writes`, 'type');
  if (kind === 'map' && o.map !== 'verdict') throw new Unreadable(`map data type ${show(o.map ?? null)} is not one kproxc writes`, 'map');
  if (kind === 'set' && o.map !== undefined) throw new Unreadable('a set with a data type', 'map');
  const rawFlags = o.flags === undefined ? [] : Array.isArray(o.flags) ? o.flags : [o.flags];
  const flags = rawFlags.map((f) => oneOf(f, SET_FLAGS));
  if (flags.some((f) => f === null)) throw new Unreadable(`set flags ${show(o.flags ?? null)} are not ones kproxc writes`, 'flags');
  const set: NftSet = { name, kind, keyType: keyType as DataType[] };
  if (flags.length) set.flags = flags as NftSet['flags'];
  if (o.timeout !== undefined) set.timeoutSeconds = int(o, 'timeout');
  const comment = optStr(o, 'comment');
  if (comment !== undefined) set.comment = comment;
  return set;
}

function readKeyPart(j: Json, type: DataType): KeyPart | null {
  switch (type) {
    case 'ipv4_addr':
    case 'ipv6_addr': {
      const ip: IP | null = typeof j === 'string' ? parseIP(j) : null;
      return ip && ip.family === (type === 'ipv4_addr' ? 4 : 6) ? { t: 'ip', ip } : null;
    }
    case 'inet_proto': {
      const name = oneOf(j, ['tcp', 'udp', 'sctp'] as const);
      return name ? { t: 'proto', name } : null;
    }
    case 'inet_service':
      return typeof j === 'number' && Number.isInteger(j) && j >= 0 && j <= 65535 ? { t: 'port', n: j } : null;
  }
}

function readKey(j: Json, set: NftSet): KeyPart[] | null {
  const parts = set.keyType.length === 1 ? [j] : isObj(j) && Array.isArray(j.concat) ? j.concat : null;
  if (!parts || parts.length !== set.keyType.length) return null;
  const key = parts.map((p, i) => readKeyPart(p, set.keyType[i]));
  return key.every((k) => k !== null) ? (key as KeyPart[]) : null;
}

/** One entry of a set's or map's `elem` array (never of a set with timeouts: see checked/reader.ts). */
export function readElement(j: Json, set: NftSet, field: string): Element {
  let keyJson: Json = j;
  let value: Verdict | undefined;
  if (set.kind === 'map') {
    if (!Array.isArray(j) || j.length !== 2) throw new Unreadable(`map entry ${show(j)} is not [key, verdict]`, field);
    keyJson = j[0];
    const v = readVerdict(j[1]);
    if (!v) throw new Unreadable(`map value ${show(j[1])} is not a verdict kproxc writes`, field);
    value = v;
  }
  let comment: string | undefined;
  if (isObj(keyJson) && isObj(keyJson.elem)) {
    // {"elem": {"val": KEY, "comment": "..."}}: the form of an element with a comment.
    const e = keyJson.elem;
    onlyKeys(e, ['val', 'comment'], field);
    comment = optStr(e, 'comment');
    keyJson = e.val ?? null;
  }
  const key = readKey(keyJson, set);
  if (!key) throw new Unreadable(`element key ${show(keyJson)} does not fit type ${set.keyType.join(' . ')}`, field);
  const el: Element = { set: set.name, key };
  if (value) el.value = value;
  if (comment !== undefined) el.comment = comment;
  return el;
}
