// `dnat ip addr . port to KEY map @M`: destination NAT to the address and port a named
// data map holds for KEY. fast-load draws an endpoint this way: from an endpoint map of
// addresses and ports, KEY a policy chain's range of keys (`numgen random mod N offset B`),
// and in the DNAT chains shared by Service ports, KEY the packet's destination and a draw
// (`ip daddr . tcp dport . numgen random mod N`). nft 1.0.6 lists it as `dnat ip to KEY
// map @M`; its JSON names the map as `"data": "@M"`.
import type { Stmt } from '../expr.js';
import { exprJson } from '../expr-json.js';
import { expr, name, NOT_OURS } from '../expr-text-read.js';
import { writeExpr } from '../expr-text.js';
import { dnatMapJson, dnatMapTextHead, namedMapLookup } from './dnat-map-head.js';
import type { StmtForms } from './forms.js';

type MapDnat = Extract<Stmt, { t: 'map-dnat' }>;

export const mapDnat: StmtForms<MapDnat> = {
  text(o, s) {
    o.str(`dnat ${s.family} addr . port to `);
    writeExpr(o, s.key);
    o.str(' map @');
    o.name(s.map);
  },
  json: (s) => ({ dnat: { family: s.family, addr: { map: { key: exprJson(s.key), data: `@${s.map}` } } } }),
  // Shared with dnat and numgen-dnat, whose maps are literal.
  jsonKeys: ['dnat'],
  fromJson(body) {
    const m = dnatMapJson(body);
    const lookup = m && namedMapLookup(m.map);
    return lookup ? { t: 'map-dnat', family: m!.family, ...lookup } : null;
  },
  textWords: ['dnat'],
  fromText(t) {
    const family = dnatMapTextHead(t);
    const key = expr(t);
    t.expect('map');
    const m = t.next();
    if (!m.startsWith('@')) throw NOT_OURS;
    return { t: 'map-dnat', family, key, map: name(m.slice(1)) };
  },
};
