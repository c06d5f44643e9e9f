// Table 15, one Service port: a load-balancing flow per address (ClusterIP, NodePort,
// external IP, load-balancer IP) to the group that serves it, the short-circuit of local
// Pods, the affinity learn flows, and our source-range extension for load-balancer IPs.
import { cidrContains, hostCIDR, type CIDR, type IP } from '../../net/ip.js';
import type { AllowedSource } from '../../model/firewall.js';
import type { Claims } from '../claims.js';
import { DROP, addr, gotoTable, groupAction, regMatch, setField, tpDst, type Flow, type LearnLoad, type MatchField } from '../../ovs/openflow.js';
import {
  EP_SELECTED,
  EP_STATE_MASK,
  EP_STATE_NODEPORT_MASK,
  EP_TO_LEARN,
  EP_TO_SELECT,
  EXTERNAL_ADDRESS,
  NODEPORT_ADDRESS,
  PRIORITY,
  SERVICE_COOKIE,
  SERVICE_PACKET,
  TABLE,
  learnCookie,
  type OvsFamily,
} from '../../ovs/pipeline.js';
import { ipProtoNumber, learnDstPortField, protoWord } from './protocol.js';
import type { GroupPlan, ServicePortPlan } from './plan.js';

/** One address (or the NodePort) of a Service port, and who serves it. */
interface Entry {
  /** The destination address, or none for a NodePort (reg4[19] says the destination is a NodePort address). */
  dst?: IP;
  port: number;
  nodePort: boolean;
  external: boolean;
  group: GroupPlan;
  /** Sources allowed by loadBalancerSourceRanges; undefined: any. */
  sources?: CIDR[];
}

function sourceCIDR(s: AllowedSource): CIDR {
  return s.t === 'cidr' ? s.cidr : hostCIDR(s.ip);
}

/** The smaller of two networks when one holds the other; undefined when they are disjoint. */
function intersect(a: CIDR, b: CIDR): CIDR | undefined {
  if (a.prefix >= b.prefix && cidrContains(b, a.addr)) return a;
  if (b.prefix >= a.prefix && cidrContains(a, b.addr)) return b;
  return undefined;
}

/** The destinations the Service port owns (claims.ts), each with the group that serves it. */
function entries(p: ServicePortPlan, claims: Claims): Entry[] {
  const sp = p.sp;
  const out: Entry[] = [];
  if (claims.owns(sp, 'ClusterIP', sp.clusterIP)) out.push({ dst: sp.clusterIP, port: sp.port, nodePort: false, external: false, group: p.internal });
  if (!p.external) return out;
  const ext = { port: sp.port, nodePort: false, external: true, group: p.external };
  if (sp.nodePort !== 0 && claims.owns(sp, 'NodePort')) out.push({ ...ext, port: sp.nodePort, nodePort: true });
  for (const ip of sp.externalIPs) if (claims.owns(sp, 'external IP', ip)) out.push({ ...ext, dst: ip });
  const sources = p.allowedSources?.map(sourceCIDR);
  for (const ip of sp.loadBalancerVIPs) if (claims.owns(sp, 'load-balancer IP', ip)) out.push({ ...ext, dst: ip, sources });
  return out;
}

function match(p: ServicePortPlan, f: OvsFamily, e: Entry, state: number, src?: CIDR): MatchField[] {
  const reg4 = e.nodePort ? regMatch('reg4', state | NODEPORT_ADDRESS, EP_STATE_NODEPORT_MASK) : regMatch('reg4', state, EP_STATE_MASK);
  return [protoWord(f, p.sp.id.protocol), reg4, ...(src ? [addr(f.src, src)] : []), ...(e.dst ? [addr(f.dst, e.dst)] : []), tpDst(e.port)];
}

/** Antrea's serviceLBFlow: mark the packet as a Service packet, record the group, select. */
function lbFlow(p: ServicePortPlan, f: OvsFamily, e: Entry, priority: number, group: GroupPlan, src?: CIDR): Flow {
  const state = p.affinityTimeout === undefined ? EP_SELECTED : EP_TO_LEARN;
  return {
    table: TABLE.serviceLB,
    priority,
    cookie: SERVICE_COOKIE,
    match: match(p, f, e, EP_TO_SELECT, src),
    actions: [
      setField(SERVICE_PACKET, SERVICE_PACKET, 'reg0'),
      setField(state, EP_STATE_MASK, 'reg4'),
      ...(e.external ? [setField(EXTERNAL_ADDRESS, EXTERNAL_ADDRESS, 'reg4')] : []),
      setField(group.id, undefined, 'reg7'),
      groupAction(group.id),
    ],
  };
}

/**
 * Antrea's serviceLearnFlow: the bucket resubmits here with the chosen endpoint in
 * reg3/xxreg3 and reg4; the learned flow in table 14 sends this client's next
 * connections to the same endpoint until hard_timeout.
 */
function learnFlow(p: ServicePortPlan, f: OvsFamily, e: Entry, timeout: number): Flow {
  const proto = p.sp.id.protocol;
  const cookie = learnCookie(e.group.id);
  const loads: LearnLoad[] = [
    { from: 'NXM_NX_REG4[0..15]', to: 'NXM_NX_REG4[0..15]' },
    { from: f.learnEndpointField, to: f.learnEndpointField },
    { value: EP_SELECTED >> 16, to: 'NXM_NX_REG4[16..18]' },
    { value: 1, to: 'NXM_NX_REG0[9]' },
    ...(e.external ? [{ value: 1, to: 'NXM_NX_REG4[21]' }] : []),
  ];
  const learn = {
    table: TABLE.sessionAffinity,
    hardTimeout: timeout,
    priority: PRIORITY.normal,
    cookie,
    ethType: f.ethType,
    ipProto: ipProtoNumber(proto),
    copies: [learnDstPortField(proto), f.learnDst, f.learnSrc],
    loads,
  };
  return {
    table: TABLE.serviceLB,
    priority: PRIORITY.low,
    cookie,
    match: match(p, f, e, EP_TO_LEARN),
    actions: [{ t: 'learn', learn }, setField(EP_SELECTED, EP_STATE_MASK, 'reg4'), gotoTable(TABLE.endpointDNAT)],
  };
}

function entryFlows(p: ServicePortPlan, f: OvsFamily, e: Entry, podCIDRs: CIDR[]): Flow[] {
  const flows: Flow[] = [];
  // Local Pods reach external addresses through all cluster endpoints, as kube-proxy's
  // short-circuit does, when the external group holds only local ones.
  const shortCircuit = e.external && p.cluster !== undefined && p.cluster !== e.group;
  // A NodePort ranks below every flow of a Service address (PRIORITY.nodePort says why).
  const [normal, high] = e.nodePort ? [PRIORITY.nodePort, PRIORITY.nodePortHigh] : [PRIORITY.normal, PRIORITY.high];
  for (const src of e.sources ?? [undefined]) {
    flows.push(lbFlow(p, f, e, normal, e.group, src));
    if (!shortCircuit) continue;
    for (const pods of podCIDRs) {
      const both = src ? intersect(src, pods) : pods;
      if (both) flows.push(lbFlow(p, f, e, high, p.cluster!, both));
    }
  }
  // Our extension: a load-balancer IP with source ranges only load-balances the allowed
  // sources (above); any other source that wants an endpoint is dropped here.
  if (e.sources) {
    flows.push({ table: TABLE.serviceLB, priority: PRIORITY.sourceRangeDrop, cookie: SERVICE_COOKIE, match: match(p, f, e, EP_TO_SELECT), actions: [DROP] });
  }
  if (p.affinityTimeout !== undefined) flows.push(learnFlow(p, f, e, p.affinityTimeout));
  return flows;
}

export function serviceFlows(p: ServicePortPlan, f: OvsFamily, podCIDRs: CIDR[], claims: Claims): Flow[] {
  return entries(p, claims).flatMap((e) => entryFlows(p, f, e, podCIDRs));
}
