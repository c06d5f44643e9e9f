// Small builders of model values for unit tests.
import { parseCIDR, parseIP } from '../../src/net/ip.js';
import type { Endpoint, FamilyModel, ServicePort } from '../../src/model/types.js';
import { servicePortKey } from '../../src/model/types.js';

export function servicePort(over: Partial<ServicePort> = {}): ServicePort {
  return {
    id: { namespace: 'ns1', name: 'svc1', port: 'p80', protocol: 'TCP' },
    pos: { file: 'test', line: 1, col: 1 },
    family: 4,
    clusterIP: parseIP('172.30.0.41')!,
    port: 80,
    nodePort: 0,
    externalIPs: [],
    loadBalancerVIPs: [],
    loadBalancerSourceRanges: [],
    externalPolicyLocal: false,
    internalPolicyLocal: false,
    healthCheckNodePort: 0,
    topologyDisabled: false,
    ...over,
  };
}

export interface EpSpec {
  ip: string;
  local?: boolean;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  zones?: string[];
  nodes?: string[];
}

export function endpoint(s: EpSpec): Endpoint {
  const ready = s.ready ?? true;
  return {
    ip: parseIP(s.ip)!,
    port: 80,
    key: `${s.ip}:80`,
    isLocal: s.local ?? false,
    ready,
    serving: s.serving ?? ready,
    terminating: s.terminating ?? false,
    zoneHints: s.zones ? new Set(s.zones) : undefined,
    nodeHints: s.nodes ? new Set(s.nodes) : undefined,
  };
}

export function familyModel(sp: ServicePort, eps: Endpoint[], over: Partial<FamilyModel> = {}): FamilyModel {
  return {
    family: 4,
    nodeName: 'test-node',
    nodeLabels: {},
    primaryNodeIP: parseIP('192.168.0.2')!,
    nodeIPs: [parseIP('192.168.0.2')!],
    podCIDRs: [],
    servicePorts: [sp],
    endpoints: new Map([[servicePortKey(sp.id), eps]]),
    serviceCIDRs: [parseCIDR('172.30.0.0/16')!.cidr],
    localDetector: { mode: 'cidr', cidr: parseCIDR('10.0.0.0/8')!.cidr },
    nodePortAddresses: { matchAll: false, ips: [parseIP('192.168.0.2')!] },
    masqueradeAll: false,
    masqueradeBit: 14,
    ...over,
  };
}

export const ips = (eps: Endpoint[]) => eps.map((e) => e.key.replace(/:80$/, ''));
