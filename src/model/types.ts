// The domain, in Kubernetes terms only: no nft or OpenFlow words here. Every list is
// sorted, so backends never depend on input order.
import type { Position } from '../diag/diagnostic.js';
import type { CIDR, IP, IPFamily } from '../net/ip.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface ServicePortName {
  namespace: string;
  name: string;
  port: string; // the port's name, "" when unnamed
  protocol: Protocol;
}

/** One port of one Service, seen from one IP family (kube-proxy's ServicePort). */
export interface ServicePort {
  id: ServicePortName;
  /** Where the Service is defined, for warnings about it. */
  pos: Position;
  family: IPFamily;
  clusterIP: IP;
  port: number;
  nodePort: number; // 0 when none
  externalIPs: IP[];
  loadBalancerVIPs: IP[]; // ingress IPs that are not ipMode Proxy
  loadBalancerSourceRanges: CIDR[];
  externalPolicyLocal: boolean;
  internalPolicyLocal: boolean;
  /** ClientIP affinity timeout in seconds; undefined without affinity. */
  affinityTimeout?: number;
  healthCheckNodePort: number;
  /** Topology hints are ignored when the Service's topology-mode annotation says Disabled. */
  topologyDisabled: boolean;
}

export interface Endpoint {
  ip: IP;
  port: number;
  /** "ip:port" (IPv6 in brackets): kube-proxy's sort key and chain-name input. */
  key: string;
  isLocal: boolean;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints?: Set<string>;
  nodeHints?: Set<string>;
}

export type LocalDetector =
  | { mode: 'none' }
  | { mode: 'cidr'; cidr: CIDR } // ClusterCIDR or NodeCIDR
  | { mode: 'bridge'; interfaceName: string }
  | { mode: 'prefix'; interfacePrefix: string };

export interface NodePortAddresses {
  /** Every local address accepts NodePorts (`fib daddr type local`). */
  matchAll: boolean;
  /** Otherwise, these node IPs do (the nodeport-ips set). */
  ips: IP[];
}

/** Everything a backend needs for one IP family's table. */
export interface FamilyModel {
  family: IPFamily;
  nodeName: string;
  nodeLabels: Record<string, string>;
  primaryNodeIP?: IP;
  nodeIPs: IP[];
  podCIDRs: CIDR[]; // this node's Pod CIDRs of the family
  servicePorts: ServicePort[]; // sorted by namespace, name, port name, protocol
  endpoints: Map<string, Endpoint[]>; // by servicePortKey; sorted by key as strings
  serviceCIDRs: CIDR[];
  localDetector: LocalDetector;
  nodePortAddresses: NodePortAddresses;
  masqueradeAll: boolean;
  masqueradeBit: number;
}

export function servicePortKey(id: ServicePortName): string {
  return `${id.namespace}/${id.name}:${id.port}/${id.protocol}`;
}

/** kube-proxy's ServicePortName.String(): "ns/name:port" (":port" only when named). */
export function servicePortNameString(id: ServicePortName): string {
  return id.port ? `${id.namespace}/${id.name}:${id.port}` : `${id.namespace}/${id.name}`;
}
