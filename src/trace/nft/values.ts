// Expressions (what a rule reads from the packet) and values (what it compares with), each
// compiled once per rule into a function. Dispatch is by a table keyed by every kind of
// expr.ts, so a new kind without an evaluator fails the type check, and a kind unknown at
// run time fails the compile of the rule that holds it: the tracer never guesses.
import { InternalError } from '../../diag/diagnostic.js';
import { cidrContains, formatIP, ipEquals, type IP } from '../../net/ip.js';
import type { Expr, Value } from '../../nft/expr.js';
import { endpointJhash } from '../../nft/jhash.js';
import type { KeyPart } from '../../nft/objects.js';
import { isLocalAddress, type NodeEnv, type PacketState } from './state.js';

/** A value read from the packet; null when the packet has no such field (`tcp dport` of UDP). */
export type Datum = { t: 'ip'; ip: IP } | { t: 'int'; n: number } | { t: 'str'; s: string } | { t: 'tuple'; parts: Datum[] };

export type ExprFn = (s: PacketState, env: NodeEnv) => Datum | null;
export type ValueFn = (d: Datum, s: PacketState) => boolean;

/** Set contents as the walker sees them: the loaded elements, plus what `update` added. */
export interface SetIndex {
  has(set: string, key: string, s: PacketState): boolean;
}

export function datumText(d: Datum): string {
  switch (d.t) {
    case 'ip':
      return formatIP(d.ip);
    case 'int':
      return String(d.n);
    case 'str':
      return d.s;
    case 'tuple':
      return d.parts.map(datumText).join(' . ');
  }
}

export function keyPartDatum(p: KeyPart): Datum {
  return p.t === 'ip' ? { t: 'ip', ip: p.ip } : p.t === 'proto' ? { t: 'str', s: p.name } : { t: 'int', n: p.n };
}

type ExprCompilers = { [K in Expr['t']]: (e: Extract<Expr, { t: K }>) => ExprFn };

const ip = (x: IP): Datum => ({ t: 'ip', ip: x });
const CT_NEW: Datum = { t: 'str', s: 'new' };
const CT_ORIGINAL: Datum = { t: 'str', s: 'original' };

/** The flags of the connection's status the tracer keeps: `dnat` and `confirmed`. */
export function ctStatusFlags(s: PacketState): string[] {
  return [...(s.ctStatusDnat ? ['dnat'] : []), ...(s.confirmed ? ['confirmed'] : [])];
}

/** An address of the packet's family, or null: an ip table sees IPv4 only and an ip6 table IPv6 only. */
const addressOf = (proto: string, x: IP): Datum | null => ((proto === 'ip') === (x.family === 4) && (proto === 'ip' || proto === 'ip6') ? ip(x) : null);

const EXPRS: ExprCompilers = {
  payload: (e) => (s) => {
    if (e.field === 'saddr' || e.field === 'daddr') return addressOf(e.proto, e.field === 'saddr' ? s.saddr : s.daddr);
    // `tcp dport` carries an implicit `meta l4proto tcp`; `th dport` reads any transport header.
    if (e.proto !== 'th' && e.proto !== s.protocol) return null;
    return { t: 'int', n: s.dport };
  },
  meta: (e) => (s) => {
    switch (e.key) {
      case 'l4proto':
        return { t: 'str', s: s.protocol };
      case 'mark':
        return { t: 'int', n: s.mark };
      case 'iifname':
        return { t: 'str', s: s.iif };
    }
  },
  // Every traced packet opens a connection (kube-proxy's rules only act on new ones), in its
  // original direction. Its status is a bitmask, read only by a test of one flag (stmts.ts).
  ct: (e) => {
    if (e.key === 'status') throw new InternalError('ct status is traced only as a test of one of its flags');
    return e.key === 'state' ? () => CT_NEW : () => CT_ORIGINAL;
  },
  'ct-original': (e) => (s) => (e.key === 'proto-dst' ? { t: 'int', n: s.original.dport } : addressOf(e.key === 'ip daddr' ? 'ip' : 'ip6', s.original.daddr)),
  // The kernel's jhash of an address and a port (fast-load's affinity records); jhash.ts
  // models exactly that key, so any other is refused rather than guessed.
  jhash: (e) => {
    const parts = e.key.t === 'concat' ? e.key.parts : [];
    if (parts.length !== 2 || parts[0].t !== 'payload' || parts[0].field !== 'daddr' || parts[1].t !== 'payload' || parts[1].field !== 'dport') {
      throw new InternalError('jhash is traced only of a destination address and port');
    }
    const [addr, port] = parts.map(compileExpr);
    return (s, env) => {
      const a = addr(s, env);
      const p = port(s, env);
      if (a?.t !== 'ip' || p?.t !== 'int') return null;
      return { t: 'int', n: endpointJhash(a.ip, p.n, e.mod, e.seed) };
    };
  },
  fib: (e) => (s, env) => ({ t: 'str', s: isLocalAddress(env, e.flag === 'saddr' ? s.saddr : s.daddr) ? 'local' : 'unicast' }),
  concat: (e) => {
    const parts = e.parts.map(compileExpr);
    return (s, env) => {
      const ds = parts.map((p) => p(s, env));
      return ds.some((d) => d === null) ? null : { t: 'tuple', parts: ds as Datum[] };
    };
  },
  and: (e) => {
    const left = compileExpr(e.left);
    return (s, env) => {
      const d = left(s, env);
      if (d === null) return null;
      if (d.t !== 'int') throw new InternalError(`bitwise and of a non-integer (${datumText(d)})`);
      return { t: 'int', n: (d.n & e.mask) >>> 0 };
    };
  },
  // A random number modulo 1 is 0: `numgen random mod 1 offset C` is the constant C (the
  // fast-load layout's key parts). Any other random number has no one value: it is traced
  // only where every outcome can be followed (a verdict map, or a match of one value, see
  // stmts.ts); anywhere else the walk would have to pick, so it refuses.
  numgen: (e) => {
    if (e.mod === 1) {
      const c: Datum = { t: 'int', n: e.offset ?? 0 };
      return () => c;
    }
    throw new InternalError(`numgen random mod ${e.mod} outside a verdict map or a match cannot be traced without picking a branch`);
  },
};

export function compileExpr(e: Expr): ExprFn {
  const c = (EXPRS as Record<string, ((e: Expr) => ExprFn) | undefined>)[e.t];
  if (!c) throw new InternalError(`the tracer cannot evaluate the expression kind ${JSON.stringify(e.t)}`);
  return c(e);
}

export function datumEquals(a: Datum, b: Datum): boolean {
  if (a.t !== b.t) return false;
  switch (a.t) {
    case 'ip':
      return ipEquals(a.ip, (b as { ip: IP }).ip);
    case 'int':
      return a.n === (b as { n: number }).n;
    case 'str':
      return a.s === (b as { s: string }).s;
    case 'tuple': {
      const bp = (b as { parts: Datum[] }).parts;
      return a.parts.length === bp.length && a.parts.every((p, i) => datumEquals(p, bp[i]));
    }
  }
}

type ValueCompilers = { [K in Value['t']]: (v: Extract<Value, { t: K }>, sets: SetIndex) => ValueFn };

const VALUES: ValueCompilers = {
  ip: (v) => (d) => d.t === 'ip' && ipEquals(d.ip, v.ip),
  prefix: (v) => (d) => d.t === 'ip' && cidrContains(v.cidr, d.ip),
  num: (v) => (d) => d.t === 'int' && d.n === v.n,
  sym: (v) => (d) => d.t === 'str' && d.s === v.s,
  // Interface names: a trailing * matches any suffix, as nft's iifname "veth*".
  str: (v) => (d) => d.t === 'str' && (v.s.endsWith('*') ? d.s.startsWith(v.s.slice(0, -1)) : d.s === v.s),
  setref: (v, sets) => (d, s) => sets.has(v.name, datumText(d), s),
  anonset: (v, sets) => {
    const items = v.items.map((i) => compileValue(i, sets));
    return (d, s) => items.some((f) => f(d, s));
  },
};

export function compileValue(v: Value, sets: SetIndex): ValueFn {
  const c = (VALUES as Record<string, ((v: Value, sets: SetIndex) => ValueFn) | undefined>)[v.t];
  if (!c) throw new InternalError(`the tracer cannot evaluate the value kind ${JSON.stringify(v.t)}`);
  return c(v, sets);
}

/** Expression and value kinds the tracer evaluates (a random numgen only where every outcome is followed). */
export const TRACED_EXPR_KINDS = Object.keys(EXPRS) as Expr['t'][];
export const TRACED_VALUE_KINDS = Object.keys(VALUES) as Value['t'][];
