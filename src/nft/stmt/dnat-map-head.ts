// What the DNATs through a map share (numgen-dnat: a literal map; map-dnat and
// map-addr-dnat: a named one): the statement's head, `dnat FAMILY addr . port to` as kproxc
// writes it or `dnat FAMILY to` as nft 1.0.6 lists it, and the JSON around the map.
import type { Expr, Family } from '../expr.js';
import { isObj, readExpr, type Obj } from '../expr-json-read.js';
import type { Json } from '../expr-json.js';
import { NOT_OURS, type Tokens } from '../expr-text-read.js';

/** The family and the map of a JSON `dnat` body that translates through a map; null for any other dnat. */
export function dnatMapJson(body: Json): { family: Family; map: Obj } | null {
  if (!isObj(body) || (body.family !== 'ip' && body.family !== 'ip6') || !isObj(body.addr) || !isObj(body.addr.map)) return null;
  if (Object.keys(body).length !== 2 || Object.keys(body.addr).length !== 1) return null;
  return { family: body.family, map: body.addr.map };
}

/** Reads the head up to and including `to`, in either spelling, and gives the family. */
export function dnatMapTextHead(t: Tokens): Family {
  t.expect('dnat');
  const family = t.next();
  if (family !== 'ip' && family !== 'ip6') throw NOT_OURS;
  if (t.peek() === 'addr') for (const w of ['addr', '.', 'port']) t.expect(w);
  t.expect('to');
  return family;
}

/** A named map's lookup in JSON, `{"key": KEY, "data": "@M"}`: the key and the map's name; null for any other. */
export function namedMapLookup(map: Obj): { key: Expr; map: string } | null {
  const key = readExpr(map.key ?? null);
  const data = map.data;
  return key && typeof data === 'string' && data.startsWith('@') ? { key, map: data.slice(1) } : null;
}
