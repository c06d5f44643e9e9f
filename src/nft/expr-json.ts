// libnftables JSON of what statements are made of: expressions, values and verdicts, as
// `nft -j list ruleset` prints them (nft 1.0.6). The statement kinds (stmt/*.ts) write
// themselves with these, and json.ts writes statements through the kinds; so this module
// imports nothing that imports the kinds, and any of them may be loaded first.
import { assertNever } from '../diag/diagnostic.js';
import { addressBits, formatIP } from '../net/ip.js';
import type { Expr, Value, Verdict } from './expr.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function exprJson(e: Expr): Json {
  switch (e.t) {
    case 'payload':
      return { payload: { protocol: e.proto, field: e.field } };
    case 'meta':
      return { meta: { key: e.key } };
    case 'ct':
      return { ct: { key: e.key } };
    case 'ct-original':
      return { ct: { key: e.key, dir: 'original' } };
    case 'jhash':
      return { jhash: { mod: e.mod, seed: e.seed, expr: exprJson(e.key) } };
    case 'fib':
      return { fib: { result: e.result, flags: [e.flag] } };
    case 'concat':
      return { concat: e.parts.map(exprJson) };
    case 'and':
      return { '&': [exprJson(e.left), e.mask] };
    case 'numgen':
      return { numgen: { mode: 'random', mod: e.mod, offset: e.offset ?? 0 } };
    default:
      return assertNever(e, 'expression kind');
  }
}

function sortKey(j: Json): string {
  return typeof j === 'string' ? j : JSON.stringify(j);
}

export function valueJson(v: Value): Json {
  switch (v.t) {
    case 'ip':
      return formatIP(v.ip);
    case 'prefix':
      // A full-length prefix is a single address, and nft lists it as one.
      if (v.cidr.prefix === addressBits(v.cidr.addr.family)) return formatIP(v.cidr.addr);
      return { prefix: { addr: formatIP(v.cidr.addr), len: v.cidr.prefix } };
    case 'num':
      return v.n;
    case 'sym':
    case 'str':
      return v.s;
    case 'setref':
      return `@${v.name}`;
    case 'anonset': {
      // nft collapses a one-element anonymous set into a plain match and sorts the rest.
      if (v.items.length === 1) return valueJson(v.items[0]);
      const items = v.items.map(valueJson);
      return { set: items.sort((a, b) => compareJsonValues(a, b)) };
    }
    default:
      return assertNever(v, 'value kind');
  }
}

function compareJsonValues(a: Json, b: Json): number {
  const ka = sortKey(a);
  const kb = sortKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export function verdictJson(v: Verdict): Json {
  return 'target' in v ? { [v.kind]: { target: v.target } } : { [v.kind]: null };
}
