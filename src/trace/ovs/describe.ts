// Steps in the user's terms: the table by its Antrea name, what the flow matched (a Service
// address, a register bit by its meaning) and what it did, with the flow itself as the rule.
import { formatCIDR, formatIP, ipEquals, type IP } from '../../net/ip.js';
import type { Action, Flow, Group, MatchField, RegField } from '../../ovs/openflow.js';
import {
  CT_HAIRPIN,
  CT_NEEDS_SNAT,
  CT_SERVICE,
  EP_PORT_MASK,
  EP_SELECTED,
  EP_STATE_MASK,
  EP_TO_LEARN,
  EP_TO_SELECT,
  EXTERNAL_ADDRESS,
  NODEPORT_ADDRESS,
  NO_ENDPOINT,
  PRIORITY,
  SERVICE_PACKET,
  TABLE,
} from '../../ovs/pipeline.js';
import { actionsText, matchFieldText, netText } from '../../ovs/syntax.js';
import { servicePortKey, type ServicePort } from '../../model/types.js';
import { hostPort } from '../packet.js';

const NAMES: Record<keyof typeof TABLE, string> = {
  classifier: 'Classifier',
  unSNAT: 'UnSNAT',
  conntrack: 'ConntrackZone',
  conntrackState: 'ConntrackState',
  preRouting: 'PreRoutingClassifier',
  nodePortMark: 'NodePortMark',
  sessionAffinity: 'SessionAffinity',
  serviceLB: 'ServiceLB',
  endpointDNAT: 'EndpointDNAT',
  snatMark: 'SNATMark',
  snat: 'SNAT',
  conntrackCommit: 'ConntrackCommit',
  output: 'Output',
};

const TABLE_NAMES = new Map<number, string>(Object.entries(TABLE).map(([k, n]) => [n, NAMES[k as keyof typeof TABLE]]));

export function tableName(n: number): string {
  return TABLE_NAMES.get(n) ?? `table ${n}`;
}

const STATES = new Map([
  [EP_TO_SELECT, 'to select'],
  [EP_SELECTED, 'selected'],
  [EP_TO_LEARN, 'to learn'],
]);

/** Register bits by meaning; what is left of a mask is printed as it is. */
const REG_BITS: { reg: RegField; mask: number; say: (v: number) => string }[] = [
  { reg: 'reg0', mask: SERVICE_PACKET, say: (v) => (v ? 'Service packet' : 'not a Service packet') },
  { reg: 'reg0', mask: NO_ENDPOINT, say: (v) => (v ? 'no endpoint' : 'has endpoints') },
  { reg: 'reg4', mask: EP_STATE_MASK, say: (v) => `endpoint ${STATES.get(v) ?? `state 0x${v.toString(16)}`}` },
  { reg: 'reg4', mask: NODEPORT_ADDRESS, say: (v) => (v ? 'NodePort address' : 'not a NodePort address') },
  { reg: 'reg4', mask: EXTERNAL_ADDRESS, say: (v) => (v ? 'external address' : 'not an external address') },
  { reg: 'reg4', mask: EP_PORT_MASK, say: (v) => `endpoint port ${v}` },
];

function regWords(reg: RegField, value: number, mask: number | undefined): string {
  if (mask === undefined) return reg === 'reg7' ? `group ID ${value}` : `${reg}=0x${value.toString(16)}`;
  const words: string[] = [];
  let rest = mask;
  for (const b of REG_BITS) {
    if (b.reg !== reg || (mask & b.mask) !== b.mask) continue;
    words.push(b.say(value & b.mask));
    rest &= ~b.mask;
  }
  if (rest !== 0) words.push(`${reg}=0x${(value & rest).toString(16)}/0x${rest.toString(16)}`);
  return words.join(', ');
}

const CT_BITS: [number, string][] = [
  [CT_SERVICE, 'Service'],
  [CT_NEEDS_SNAT, 'needs SNAT'],
  [CT_HAIRPIN, 'hairpin'],
];

function markWords(value: number, mask: number): string {
  const named = CT_BITS.filter(([b]) => (mask & b) === b).map(([b, n]) => ((value & b) !== 0 ? n : `not ${n}`));
  const rest = CT_BITS.reduce((m, [b]) => m & ~b, mask);
  return ['ct_mark', ...named, ...(rest ? [`0x${(value & rest).toString(16)}/0x${rest.toString(16)}`] : [])].join(' ');
}

const CT_STATES: Record<string, string> = {
  '+new+trk': 'new connection',
  '+inv+trk': 'invalid connection',
  '-new+trk': 'established connection',
  '-new+trk-rpl': 'established connection, request direction',
};

const PROTO_WORDS: Record<string, string> = { ip: 'IPv4', ipv6: 'IPv6', icmp6: 'ICMPv6' };

function matchWords(m: MatchField): string {
  switch (m.t) {
    case 'proto':
      return PROTO_WORDS[m.word] ?? m.word.replace(/6$/, '');
    case 'addr':
      return `${m.field.endsWith('src') ? 'source' : 'destination'} ${netText(m.net)}`;
    case 'tp-dst':
      return `port ${m.port}`;
    case 'reg':
      return regWords(m.reg, m.value, m.mask);
    case 'reg-ip':
      return `endpoint ${formatIP(m.ip)}`;
    case 'ct-state':
      return CT_STATES[matchFieldText(m).slice('ct_state='.length)] ?? matchFieldText(m);
    case 'ct-mark':
      return markWords(m.value, m.mask);
    default:
      return matchFieldText(m);
  }
}

function actionWords(a: Action, groups: Map<number, Group>): string {
  switch (a.t) {
    case 'output':
      return a.port === 'NORMAL' ? 'NORMAL (switched on)' : 'IN_PORT (back out of the port it came from)';
    case 'goto-table':
      return `goto table ${a.table}`;
    case 'resubmit':
      return `resubmit to table ${a.table}`;
    case 'group': {
      const n = groups.get(a.id)?.buckets.length ?? 0;
      return `group ${a.id} (select, ${n} bucket${n === 1 ? '' : 's'})`;
    }
    case 'set-field':
      return a.field === 'ct_mark' ? `${markWords(a.value, a.mask ?? 0xffffffff)} set` : `set ${regWords(a.field, a.value, a.mask)}`;
    case 'set-ip':
      return `set endpoint ${formatIP(a.ip)}`;
    case 'ct': {
      const parts = [`${a.commit ? 'ct commit' : 'ct'} in zone ${a.zone}`];
      if (a.nat) parts.push(a.nat.t === 'nat' ? 'with the connection\'s NAT' : a.nat.t === 'dnat' ? `DNAT to ${hostPort(a.nat.ip, a.nat.port)}` : `SNAT to ${formatIP(a.nat.ip)}`);
      for (const e of a.exec) parts.push(`${markWords(e.value, e.mask ?? 0xffffffff)} set`);
      return `${parts.join(', ')}, resume at table ${a.table}`;
    }
    case 'controller':
      return 'packet-in to the controller: no endpoint for this packet, the agent rejects';
    case 'learn':
      return `learn: this client's next connections keep this endpoint for ${a.learn.hardTimeout} s (table ${a.learn.table})`;
    default:
      return actionsText([a]);
  }
}

/** The flow as `ovs-ofctl dump-flows` would show its priority, match and actions. */
export function ruleText(f: Flow): string {
  const m = f.match.map(matchFieldText);
  return `priority=${f.priority}${m.length ? `,${m.join(',')}` : ''} actions=${actionsText(f.actions)}`;
}

/** "ClusterIP 10.96.0.10 udp 53 of ns/svc:port/UDP", or undefined for a flow of no Service address. */
function serviceWords(f: Flow, sp: ServicePort): string | undefined {
  const dst = f.match.find((m) => m.t === 'addr' && m.field.endsWith('dst'));
  const src = f.match.find((m) => m.t === 'addr' && m.field.endsWith('src'));
  const port = f.match.find((m) => m.t === 'tp-dst');
  const nodePort = f.match.some((m) => m.t === 'reg' && m.reg === 'reg4' && ((m.value & NODEPORT_ADDRESS) !== 0));
  if (!port || port.t !== 'tp-dst' || f.table !== TABLE.serviceLB) return undefined;
  let what: string;
  if (nodePort) what = 'NodePort';
  else if (dst?.t !== 'addr') return undefined;
  else {
    const ip: IP = dst.net.addr;
    const kind = ipEquals(ip, sp.clusterIP) ? 'ClusterIP' : sp.loadBalancerVIPs.some((v) => ipEquals(v, ip)) ? 'load-balancer IP' : 'external IP';
    what = `${kind} ${formatIP(ip)}`;
  }
  let from = '';
  if (src?.t === 'addr') from = ` from ${f.priority > 200 ? 'a local Pod' : 'an allowed source'} (${formatCIDR(src.net)})`;
  return `${what} ${sp.id.protocol.toLowerCase()} ${port.port}${from} of ${servicePortKey(sp.id)}`;
}

/** The ClusterIP checks of table 15 (kube-proxy's cluster-ips-check), or undefined for another flow. */
function serviceRangeWords(f: Flow): string | undefined {
  const dst = f.match.find((m) => m.t === 'addr');
  if (f.table !== TABLE.serviceLB || dst?.t !== 'addr') return undefined;
  if (f.priority === PRIORITY.clusterIPReject) return `${formatIP(dst.net.addr)} is a ClusterIP, but no Service port there serves this protocol and port → reject: set no endpoint, goto table ${TABLE.endpointDNAT}`;
  if (f.priority === PRIORITY.serviceCIDRDrop) return `${formatCIDR(dst.net)} is a ServiceCIDR, and no Service has this address and port → drop`;
  return undefined;
}

/** What a flow matched and did, in words. */
export function flowWords(f: Flow, owner: ServicePort | undefined, groups: Map<number, Group>): string {
  const did = f.actions.filter((a) => !(owner && f.table === TABLE.serviceLB && a.t === 'set-field')).map((a) => actionWords(a, groups));
  if (!owner) {
    const range = serviceRangeWords(f);
    if (range) return range;
  }
  const svc = owner ? serviceWords(f, owner) : undefined;
  if (svc) {
    const learning = f.match.some((m) => m.t === 'reg' && m.reg === 'reg4' && m.mask !== undefined && (m.value & EP_STATE_MASK) === EP_TO_LEARN);
    const verb = learning ? 'endpoint chosen for' : f.actions.some((a) => a.t === 'drop') ? 'a source outside loadBalancerSourceRanges at' : 'matched';
    return `${verb} ${svc} → ${did.join(', ')}`;
  }
  const matched = f.match.length ? f.match.map(matchWords).join(', ') : 'no other flow matched';
  return `${matched} → ${did.join(', ')}`;
}

export function bucketWords(g: Group, i: number, groups: Map<number, Group>): string {
  return `bucket ${i} of ${g.buckets.length}: ${g.buckets[i].actions.map((a) => actionWords(a, groups)).join(', ')}`;
}
