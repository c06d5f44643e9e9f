// Learned affinity flows (table 14, learned by our learn actions) are the bridge's memory
// of which endpoint each client has; the diff keeps them unless they would send a client
// somewhere the compiled state no longer goes. Their shape is fixed by our learn action:
//   cookie=C, table=14, hard_timeout=T, priority=200,PROTO,SRC=client,DST=ip,tp_dst=port
//   actions=set_field:PORT/0xffff->reg4,set_field:EP->reg3|xxreg3,set_field:0x20000/0x70000->reg4,
//           set_field:0x200/0x200->reg0[,set_field:0x200000/0x200000->reg4]
import type { Group, Flow } from '../../backends/ovs/openflow.js';
import { TABLE } from '../../backends/ovs/pipeline.js';
import type { LiveFlow } from '../../live/ovs/dump-read.js';
import { formatIP } from '../../net/ip.js';
import { cookieHex, ipValueHex, ovsHex } from '../../backends/ovs/canonical.js';

const LEARNED_ACTIONS =
  /^set_field:(0x[0-9a-f]+|0)\/0xffff->reg4,set_field:(0x[0-9a-f]+|0)->x?x?reg3,set_field:0x20000\/0x70000->reg4,set_field:0x200\/0x200->reg0(,set_field:0x200000\/0x200000->reg4)?$/;
const LEARNED_MATCH = /^(tcp|udp|sctp)(6?),(?:nw_src|ipv6_src)=[0-9a-f.:]+,(?:nw_dst|ipv6_dst)=([0-9a-f.:]+),tp_dst=(\d+)$/;

/** What one learn flow of ours learns for: protocol word, destination port, and address unless a NodePort. */
export interface LearnSpec {
  proto: string;
  port: number;
  dst?: string;
}

export interface Learned {
  /** Endpoints (`EPHEX|PORTHEX`) of each desired group. */
  endpoints: Map<number, Set<string>>;
  /** Learn flows of each learn cookie. */
  learns: Map<string, LearnSpec[]>;
}

/** Endpoints (`EPHEX|PORTHEX`) of each group. */
export function groupEndpoints(groups: Group[]): Map<number, Set<string>> {
  const endpoints = new Map<number, Set<string>>();
  for (const g of groups) {
    const set = new Set<string>();
    for (const b of g.buckets) {
      const ip = b.actions.find((a) => a.t === 'set-ip');
      const port = b.actions.find((a) => a.t === 'set-field' && a.field === 'reg4');
      if (ip?.t === 'set-ip' && port?.t === 'set-field') set.add(`${ipValueHex(ip.ip)}|${ovsHex(port.value)}`);
    }
    endpoints.set(g.id, set);
  }
  return endpoints;
}

/** Notes what a learn flow of ours learns for (other flows are passed over). */
export function addLearn(learns: Map<string, LearnSpec[]>, f: Flow): void {
  if (f.table !== TABLE.serviceLB || !f.actions.some((a) => a.t === 'learn')) return;
  const spec: LearnSpec = { proto: '', port: 0 };
  for (const m of f.match) {
    if (m.t === 'proto') spec.proto = m.word;
    else if (m.t === 'tp-dst') spec.port = m.port;
    else if (m.t === 'addr' && (m.field === 'nw_dst' || m.field === 'ipv6_dst')) spec.dst = formatIP(m.net.addr);
  }
  const cookie = cookieHex(f.cookie);
  const list = learns.get(cookie) ?? [];
  list.push(spec);
  learns.set(cookie, list);
}

/** Is this live flow one OVS learned from our learn actions (table 14, a group's cookie, a timeout)? */
export function isLearned(f: LiveFlow, serviceCookie: string): boolean {
  return f.table === TABLE.sessionAffinity && f.cookie !== serviceCookie && f.hardTimeout !== undefined;
}

/**
 * Keep a learned flow while the compiled state would still send its client there: its
 * group (the cookie) exists, still holds the endpoint, and a learn flow of that cookie
 * still learns for this protocol, port and address. Undefined: not of the shape we learn.
 */
export function keepLearned(f: LiveFlow, idx: Learned): boolean | undefined {
  const a = LEARNED_ACTIONS.exec(f.actions);
  const m = LEARNED_MATCH.exec(f.match);
  if (!a || !m) return undefined;
  const group = parseInt(f.cookie.slice(-8), 16);
  if (!idx.endpoints.get(group)?.has(`${a[2]}|${a[1]}`)) return false;
  const proto = m[1] + m[2];
  const port = Number(m[4]);
  return (idx.learns.get(f.cookie) ?? []).some((s) => s.proto === proto && s.port === port && (s.dst === undefined || s.dst === m[3]));
}
