// `dnat ip addr . port to numgen random mod N map { 0 : A . P , 1 : B . Q }`: destination
// NAT to an endpoint drawn at random from a literal map (kube-proxy 1.36's Service chain,
// with no chain per endpoint). IPv6 is `dnat ip6 addr . port to ...`. nft 1.0.6 lists it as
// `dnat ip to numgen random mod N map { 0 : A . P, 1 : B . Q }`, and its JSON carries the
// family and the map of address-port pairs, with no "port" of its own.
import { formatIP, parseIP, type IP } from '../../net/ip.js';
import type { Stmt } from '../expr.js';
import { isObj, type Obj } from '../expr-json-read.js';
import type { Json } from '../expr-json.js';
import { number, NOT_OURS, type Tokens } from '../expr-text-read.js';
import { dnatMapJson, dnatMapTextHead } from './dnat-map-head.js';
import type { StmtForms } from './forms.js';

type NumgenDnat = Extract<Stmt, { t: 'numgen-dnat' }>;
type Target = NumgenDnat['targets'][number];

const isPort = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 65535;

/** The family word of the targets' addresses: `ip` or `ip6`. */
function numgenDnatFamily(s: NumgenDnat): 'ip' | 'ip6' {
  return s.targets[0]?.ip.family === 6 ? 'ip6' : 'ip';
}

export const numgenDnat: StmtForms<NumgenDnat> = {
  text(o, s) {
    o.str('dnat ');
    o.str(numgenDnatFamily(s));
    o.str(' addr . port to numgen random mod ');
    o.num(s.mod);
    o.str(' map { ');
    for (let i = 0; i < s.targets.length; i++) {
      if (i > 0) o.str(' , ');
      o.num(i);
      o.str(' : ');
      o.ip(s.targets[i].ip);
      o.str(' . ');
      o.num(s.targets[i].port);
    }
    o.str(' }');
  },
  json: (s) => ({
    dnat: {
      family: numgenDnatFamily(s),
      addr: {
        map: {
          key: { numgen: { mode: 'random', mod: s.mod, offset: 0 } },
          data: { set: s.targets.map((t, i) => [i, { concat: [formatIP(t.ip), t.port] }]) },
        },
      },
    },
  }),
  // Shared with dnat, whose address is a string rather than a map.
  jsonKeys: ['dnat'],
  fromJson(body) {
    const m = dnatMapJson(body);
    return m && readMap(m.map, m.family === 'ip6' ? 6 : 4);
  },
  textWords: ['dnat'],
  fromText(t) {
    const fam = dnatMapTextHead(t);
    for (const w of ['numgen', 'random', 'mod']) t.expect(w);
    const mod = number(t.next());
    t.expect('map');
    return { t: 'numgen-dnat', mod, targets: targetsText(t, fam === 'ip6' ? 6 : 4) };
  },
};

function readMap(map: Obj, family: 4 | 6): NumgenDnat | null {
  const key = map.key;
  const data = map.data;
  if (!isObj(key) || !isObj(key.numgen) || key.numgen.mode !== 'random' || (key.numgen.offset ?? 0) !== 0) return null;
  const mod = key.numgen.mod;
  if (typeof mod !== 'number' || !isObj(data) || !Array.isArray(data.set) || data.set.length === 0) return null;
  const targets: Target[] = [];
  for (const [i, entry] of data.set.entries()) {
    const target = Array.isArray(entry) && entry.length === 2 && entry[0] === i ? readTarget(entry[1], family) : null;
    if (!target) return null;
    targets.push(target);
  }
  return { t: 'numgen-dnat', mod, targets };
}

/** `{"concat": ["10.0.3.2", 80]}`: an address of the family, and a port. */
function readTarget(j: Json, family: 4 | 6): Target | null {
  if (!isObj(j) || !Array.isArray(j.concat) || j.concat.length !== 2) return null;
  const [addr, port] = j.concat;
  const ip = typeof addr === 'string' ? parseIP(addr) : null;
  return ip && ip.family === family && isPort(port) ? { ip, port } : null;
}

/**
 * `{ 0 : A . P , 1 : B . Q }` after `map`; nft's listing writes `P, 1` where kube-proxy
 * writes `P , 1`, so a port word may carry the comma that follows it.
 */
function targetsText(t: Tokens, family: 4 | 6): Target[] {
  t.expect('{');
  const targets: Target[] = [];
  for (;;) {
    if (number(t.next()) !== targets.length) throw NOT_OURS;
    t.expect(':');
    const ip: IP | null = parseIP(t.next());
    if (!ip || ip.family !== family) throw NOT_OURS;
    t.expect('.');
    let port = t.next();
    let sep: string;
    if (port.endsWith(',')) {
      port = port.slice(0, -1);
      sep = ',';
    } else sep = t.next();
    const n = number(port);
    if (!isPort(n)) throw NOT_OURS;
    targets.push({ ip, port: n });
    if (sep === '}') return targets;
    if (sep !== ',') throw NOT_OURS;
  }
}
