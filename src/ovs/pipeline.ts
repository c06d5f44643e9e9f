// Every number of the pipeline declared once, with its reason: tables, priorities,
// registers, marks, conntrack zones, cookies and virtual IPs. They follow Antrea v1.12
// (pkg/agent/openflow) so that a dump reads like an Antrea node's Service stretch; the
// table numbers are ours, fixed, because this bridge carries nothing else. They are data
// that more than the backend reads: the ovs diff tells our flows from others' by their
// tables and cookies, the conntrack clean-up finds the load-balancing table and the DNAT
// zone, and the tracer walks the tables; so they live in the library, not the backend.
import { parseIP, type IP, type IPFamily } from '../net/ip.js';
import type { AddrField, ProtoWord, RegField } from './openflow.js';

export const TABLE = {
  classifier: 0,
  unSNAT: 5,
  conntrack: 10,
  conntrackState: 11,
  preRouting: 12,
  nodePortMark: 13,
  sessionAffinity: 14,
  serviceLB: 15,
  endpointDNAT: 16,
  snatMark: 17,
  snat: 18,
  conntrackCommit: 19,
  output: 20,
} as const;

/** Antrea's priorityHigh / Normal / Low / Miss. */
export const PRIORITY = {
  high: 210,
  normal: 200,
  /** Our extension: below the allowed-source load-balancing flows, above nothing they overlap. */
  sourceRangeDrop: 195,
  /**
   * Our extension: a NodePort's load-balancing flows (its short-circuit, then the rest),
   * below every flow of a Service address, which kube-proxy's services chain looks up
   * first: a node address that is also an external or load-balancer IP on the NodePort's
   * port is that address's; at one priority the two flows would overlap, and OVS would
   * run either.
   */
  nodePortHigh: 194,
  nodePort: 192,
  low: 190,
  /** Our extension (kube-proxy's cluster-ips-check), below every load-balancing flow of table 15. */
  clusterIPReject: 180,
  serviceCIDRDrop: 170,
  miss: 0,
} as const;

/** Antrea's cookie for the Service category (round 0); learn flows add their group ID. */
export const SERVICE_COOKIE = 0x1030000000000n;

export function learnCookie(groupID: number): bigint {
  return SERVICE_COOKIE | BigInt(groupID);
}

// reg4: bits 0..15 endpoint port, 16..18 endpoint state, 19 NodePort address, 21 external address.
export const EP_PORT_MASK = 0xffff;
export const EP_STATE_MASK = 0x70000;
export const EP_TO_SELECT = 0x10000;
export const EP_SELECTED = 0x20000;
export const EP_TO_LEARN = 0x30000;
export const NODEPORT_ADDRESS = 0x80000;
export const EXTERNAL_ADDRESS = 0x200000;
/** The endpoint state together with the NodePort-address bit. */
export const EP_STATE_NODEPORT_MASK = EP_STATE_MASK | NODEPORT_ADDRESS;
/** The endpoint port together with the endpoint state (Antrea's EpUnionField). */
export const EP_UNION_MASK = EP_STATE_MASK | EP_PORT_MASK;

// reg0: bit 9 Service packet (Antrea's RewriteMACRegMark), bit 14 Service without endpoint.
export const SERVICE_PACKET = 0x200;
export const NO_ENDPOINT = 0x4000;

// ct_mark
export const CT_SERVICE = 0x10;
export const CT_NEEDS_SNAT = 0x20;
export const CT_HAIRPIN = 0x40;

/** Reason of the packet-in for a Service without endpoints (Antrea's PacketInCategorySvcReject). */
export const NO_ENDPOINT_USERDATA = '04';

/** What differs between the IPv4 and the IPv6 pipeline. */
export interface OvsFamily {
  family: IPFamily;
  ip: Extract<ProtoWord, 'ip' | 'ipv6'>;
  src: AddrField;
  dst: AddrField;
  dnatZone: number;
  snatZone: number;
  /** Source of hairpin connections after SNAT (Antrea's VirtualServiceIP). */
  virtualServiceIP: IP;
  /** Destination the host uses for NodePorts (Antrea's VirtualNodePortDNATIP). */
  virtualNodePortIP: IP;
  /** The register that carries the selected endpoint's address. */
  endpointReg: RegField;
  /** The same in learn's NXM syntax, and the learned match fields. */
  learnEndpointField: string;
  learnDst: string;
  learnSrc: string;
  ethType: number;
}

export const IPV4: OvsFamily = {
  family: 4,
  ip: 'ip',
  src: 'nw_src',
  dst: 'nw_dst',
  dnatZone: 65520,
  snatZone: 65521,
  virtualServiceIP: parseIP('169.254.0.253')!,
  virtualNodePortIP: parseIP('169.254.0.252')!,
  endpointReg: 'reg3',
  learnEndpointField: 'NXM_NX_REG3[]',
  learnDst: 'NXM_OF_IP_DST[]',
  learnSrc: 'NXM_OF_IP_SRC[]',
  ethType: 0x800,
};

export const IPV6: OvsFamily = {
  family: 6,
  ip: 'ipv6',
  src: 'ipv6_src',
  dst: 'ipv6_dst',
  dnatZone: 65510,
  snatZone: 65511,
  virtualServiceIP: parseIP('fc01::aabb:ccdd:eeff')!,
  virtualNodePortIP: parseIP('fc01::aabb:ccdd:eefe')!,
  endpointReg: 'xxreg3',
  learnEndpointField: 'NXM_NX_XXREG3[]',
  learnDst: 'NXM_NX_IPV6_DST[]',
  learnSrc: 'NXM_NX_IPV6_SRC[]',
  ethType: 0x86dd,
};

export function ovsFamily(f: IPFamily): OvsFamily {
  return f === 4 ? IPV4 : IPV6;
}
