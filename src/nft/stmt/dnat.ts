// `dnat to 10.0.0.1:80`, `dnat to [fd00::1]:80`: destination NAT to an endpoint.
import { formatIP, parseIP } from '../../net/ip.js';
import type { Stmt } from '../expr.js';
import { isObj } from '../expr-json-read.js';
import { number, NOT_OURS } from '../expr-text-read.js';
import type { StmtForms } from './forms.js';

type Dnat = Extract<Stmt, { t: 'dnat' }>;

export const dnat: StmtForms<Dnat> = {
  text(o, s) {
    if (s.ip.family === 6) {
      o.str('dnat to [');
      o.ip(s.ip);
      o.str(']:');
    } else {
      o.str('dnat to ');
      o.ip(s.ip);
      o.str(':');
    }
    o.num(s.port);
  },
  json: (s) => ({ dnat: { addr: formatIP(s.ip), port: s.port } }),
  jsonKeys: ['dnat'],
  fromJson(body) {
    const ip = isObj(body) && typeof body.addr === 'string' ? parseIP(body.addr) : null;
    return ip && isObj(body) && typeof body.port === 'number' ? { t: 'dnat', ip, port: body.port } : null;
  },
  textWords: ['dnat'],
  fromText(t) {
    t.next();
    t.expect('to');
    const w = t.next();
    const v6 = /^\[(.+)\]:([0-9]+)$/.exec(w);
    const v4 = v6 ? null : /^([^:]+):([0-9]+)$/.exec(w);
    const m = v6 ?? v4;
    const ip = m ? parseIP(m[1]) : null;
    if (!m || !ip || (ip.family === 6) !== (v6 !== null)) throw NOT_OURS;
    return { t: 'dnat', ip, port: number(m[2]) };
  },
};
