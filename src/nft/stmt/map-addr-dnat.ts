// `dnat to KEY map @M:P`: destination NAT to the address a named data map holds for KEY,
// and the port P. fast-load's policy chains whose endpoints all listen on one port draw
// this way (KEY is the chain's draw, `numgen random mod N offset B`), so that each element
// of M is one address rather than the concatenation of an address and a port: nft 1.0.6
// parses, keeps and lists such an element for a third less. nft lists the statement in
// this very spelling in both families, and its JSON as {"addr": {"map": ...}, "port": P},
// with no family.
import type { Stmt } from '../expr.js';
import { isObj } from '../expr-json-read.js';
import { exprJson } from '../expr-json.js';
import { expr, name, number, NOT_OURS } from '../expr-text-read.js';
import { writeExpr } from '../expr-text.js';
import { namedMapLookup } from './dnat-map-head.js';
import type { StmtForms } from './forms.js';

type MapAddrDnat = Extract<Stmt, { t: 'map-addr-dnat' }>;

export const mapAddrDnat: StmtForms<MapAddrDnat> = {
  text(o, s) {
    o.str('dnat to ');
    writeExpr(o, s.key);
    o.str(' map @');
    o.name(s.map);
    o.str(':');
    o.num(s.port);
  },
  json: (s) => ({ dnat: { addr: { map: { key: exprJson(s.key), data: `@${s.map}` } }, port: s.port } }),
  // Shared with the other DNATs.
  jsonKeys: ['dnat'],
  fromJson(body) {
    if (!isObj(body) || Object.keys(body).length !== 2 || !isObj(body.addr) || typeof body.port !== 'number') return null;
    const m = Object.keys(body.addr).length === 1 && isObj(body.addr.map) ? body.addr.map : null;
    const lookup = m && Object.keys(m).length === 2 ? namedMapLookup(m) : null;
    return lookup ? { t: 'map-addr-dnat', ...lookup, port: body.port } : null;
  },
  textWords: ['dnat'],
  fromText(t) {
    t.expect('dnat');
    t.expect('to');
    const key = expr(t);
    t.expect('map');
    const m = /^@(.+):([0-9]+)$/.exec(t.next());
    if (!m) throw NOT_OURS;
    return { t: 'map-addr-dnat', key, map: name(m[1]), port: number(m[2]) };
  },
};
