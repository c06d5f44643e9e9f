// libnftables JSON (as `nft -j list ruleset` prints it) back into our typed objects: the
// inverse of json.ts. Only what kproxc itself writes is understood; anything else throws
// Unreadable, because a diff against an object we cannot read would be a guess.
//
// Statements are read by shape (nft/json-read.ts, each kind's fromJson) and then checked by
// writing them back: a rule is understood only when stmtJson of what we read is the same
// rule (canonical.ts) as the listing.
import { parseIP, type IP } from '../../net/ip.js';
import { canonicalStmt, jsonEquals } from '../../nft/canonical.js';
import type { Family, Stmt, Verdict } from '../../nft/expr.js';
import type { Json } from '../../nft/expr-json.js';
import { concat, payload } from '../../nft/expr.js';
import { isObj, oneOf, readVerdict, type Obj } from '../../nft/expr-json-read.js';
import { readStmtShape } from '../../nft/json-read.js';
import { stmtJson } from '../../nft/json.js';
import { isUint32, type BaseChainSpec, type Chain, type DataType, type Element, type Hook, type KeyPart, type NftSet } from '../../nft/objects.js';

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

export { isObj };

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

const DATA_TYPES: readonly DataType[] = ['ipv4_addr', 'ipv6_addr', 'inet_proto', 'inet_service', 'integer'];
const SET_FLAGS = ['dynamic', 'timeout', 'interval'] as const;

export function readSet(kind: 'set' | 'map', o: Obj): NftSet {
  onlyKeys(o, ['family', 'table', 'name', 'handle', 'type', 'map', 'flags', 'timeout', 'size', 'comment', 'elem']);
  const name = str(o, 'name');
  const types = Array.isArray(o.type) ? o.type : [o.type ?? null];
  const keyType = types.map((t) => oneOf(t, DATA_TYPES));
  if (keyType.length === 0 || keyType.some((t) => t === null)) throw new Unreadable(`key type ${show(o.type ?? null)} is not one kproxc writes`, 'type');
  const data = kind === 'map' && o.map !== 'verdict' ? readDataTypes(o.map ?? null) : undefined;
  if (kind === 'map' && o.map !== 'verdict' && !data) throw new Unreadable(`map data type ${show(o.map ?? null)} is not one kproxc writes`, 'map');
  if (kind === 'set' && o.map !== undefined) throw new Unreadable('a set with a data type', 'map');
  const rawFlags = o.flags === undefined ? [] : Array.isArray(o.flags) ? o.flags : [o.flags];
  const flags = rawFlags.map((f) => oneOf(f, SET_FLAGS));
  if (flags.some((f) => f === null)) throw new Unreadable(`set flags ${show(o.flags ?? null)} are not ones kproxc writes`, 'flags');
  const set: NftSet = { name, kind, keyType: keyType as DataType[] };
  if (data) set.data = data;
  if (flags.length) set.flags = flags as NftSet['flags'];
  if (o.timeout !== undefined) set.timeoutSeconds = int(o, 'timeout');
  if (o.size !== undefined) set.size = int(o, 'size');
  const comment = optStr(o, 'comment');
  if (comment !== undefined) set.comment = comment;
  return set;
}

/**
 * A data map's value types, `"ipv4_addr"` or `"ipv4_addr . inet_service"` (fast-load's
 * endpoint maps: addresses, or addresses and ports): what its `typeof` declares them by is
 * of no matter to the diff, which compares the types.
 */
function readDataTypes(j: Json): NftSet['data'] {
  const v6 = j === 'ipv6_addr' || j === 'ipv6_addr . inet_service';
  if (!v6 && j !== 'ipv4_addr' && j !== 'ipv4_addr . inet_service') return undefined;
  const addr = payload(v6 ? 'ip6' : 'ip', 'daddr');
  const addrType = v6 ? 'ipv6_addr' : 'ipv4_addr';
  if (j === addrType) return { types: [addrType], typeof: addr };
  return { types: [addrType, 'inet_service'], typeof: concat(addr, payload('tcp', 'dport')) };
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
    case 'integer':
      return typeof j === 'number' && isUint32(j) ? { t: 'int', n: j } : null;
  }
}

function readKey(j: Json, set: NftSet): KeyPart[] | null {
  const parts = set.keyType.length === 1 ? [j] : isObj(j) && Array.isArray(j.concat) ? j.concat : null;
  if (!parts || parts.length !== set.keyType.length) return null;
  const key = parts.map((p, i) => readKeyPart(p, set.keyType[i]));
  return key.every((k) => k !== null) ? (key as KeyPart[]) : null;
}

/**
 * One entry of a set's or map's `elem` array. In a set with timeouts (read only for the
 * managed sets the LiveFilter names) an entry also has its timeout and the time
 * left, which are state, not wanted: not kept.
 */
export function readElement(j: Json, set: NftSet, field: string): Element {
  let keyJson: Json = j;
  let value: Verdict | undefined;
  let data: KeyPart[] | undefined;
  if (set.kind === 'map') {
    if (!Array.isArray(j) || j.length !== 2) throw new Unreadable(`map entry ${show(j)} is not [key, verdict]`, field);
    keyJson = j[0];
    if (set.data) {
      data = readKey(j[1], { ...set, keyType: set.data.types }) ?? undefined;
      if (!data) throw new Unreadable(`map value ${show(j[1])} does not fit type ${set.data.types.join(' . ')}`, field);
    } else {
      const v = readVerdict(j[1]);
      if (!v) throw new Unreadable(`map value ${show(j[1])} is not a verdict kproxc writes`, field);
      value = v;
    }
  }
  let comment: string | undefined;
  if (isObj(keyJson) && isObj(keyJson.elem)) {
    // {"elem": {"val": KEY, "comment": "..."}}: the form of an element with a comment (or a timeout).
    const e = keyJson.elem;
    onlyKeys(e, set.flags?.includes('timeout') ? ['val', 'comment', 'timeout', 'expires'] : ['val', 'comment'], field);
    comment = optStr(e, 'comment');
    keyJson = e.val ?? null;
  }
  const key = readKey(keyJson, set);
  if (!key) throw new Unreadable(`element key ${show(keyJson)} does not fit type ${set.keyType.join(' . ')}`, field);
  const el: Element = { set: set.name, key };
  if (value) el.value = value;
  if (data) el.data = data;
  if (comment !== undefined) el.comment = comment;
  return el;
}
