// What a snapshot says, read directly from the YAML for the data-plane tests. The expected
// outcome of every probe (which endpoints may answer, which are local, which addresses a
// Service has) comes from here, never from kproxc's own model, so a mistake in the model
// cannot make the tests agree with the rules it produced.
//
// Deliberately small: it reads the fields the data-plane fixtures use and the API's
// defaults for them (missing `ready` counts as ready), nothing of topology hints or
// terminating fallbacks, which the fixtures avoid.
import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { cidrContains, formatIP, parseCIDR, parseIP } from '../../../src/net/ip.js';

export type Family = 4 | 6;
export type Proto = 'tcp' | 'udp';

export interface SnapNode {
  name: string;
  internalIPs: string[];
  podCIDRs: string[];
}

export interface SnapPort {
  name: string;
  proto: Proto;
  port: number;
  nodePort?: number;
}

export interface SnapService {
  key: string; // namespace/name
  type: string;
  clusterIPs: string[];
  ports: SnapPort[];
  externalIPs: string[];
  lbIPs: string[];
  sourceRanges: string[];
  externalLocal: boolean;
  clientIPAffinity: boolean;
}

export interface SnapEndpoint {
  service: string;
  family: Family;
  addr: string;
  pod: string;
  node: string | undefined;
  ready: boolean;
  ports: { name: string; proto: Proto; port: number }[];
}

export interface Snapshot {
  file: string;
  nodeName: string;
  /** KubeProxyConfiguration's clusterCIDR, one per family: what counts as a pod source. */
  clusterCIDRs: string[];
  nodes: SnapNode[];
  services: SnapService[];
  endpoints: SnapEndpoint[];
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Canonical text of an address, so that fixture text and socket-reported text compare. */
export function canon(addr: string): string {
  const ip = parseIP(addr.trim());
  if (!ip) throw new Error(`not an IP address: ${addr}`);
  return formatIP(ip);
}

export function familyOf(addr: string): Family {
  return addr.includes(':') ? 6 : 4;
}

function objectsOf(text: string): Obj[] {
  const out: Obj[] = [];
  for (const doc of parseAllDocuments(text) as unknown as { toJS(): unknown }[]) {
    const v = doc.toJS() as Obj | null;
    if (!v) continue;
    if (v.kind === 'List' && Array.isArray(v.items)) out.push(...v.items);
    else out.push(v);
  }
  return out;
}

const proto = (p: unknown): Proto => {
  const s = String(p ?? 'TCP').toLowerCase();
  if (s !== 'tcp' && s !== 'udp') throw new Error(`data-plane fixtures use TCP and UDP only, not ${s}`);
  return s;
};

function readService(o: Obj): SnapService {
  const spec = o.spec ?? {};
  const clusterIPs: string[] = spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []);
  return {
    key: `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`,
    type: spec.type ?? 'ClusterIP',
    clusterIPs: clusterIPs.filter((ip) => ip !== 'None').map(canon),
    ports: (spec.ports ?? []).map((p: Obj) => ({ name: p.name ?? '', proto: proto(p.protocol), port: p.port, nodePort: p.nodePort })),
    externalIPs: (spec.externalIPs ?? []).map(canon),
    lbIPs: (o.status?.loadBalancer?.ingress ?? []).filter((i: Obj) => i.ip).map((i: Obj) => canon(i.ip)),
    sourceRanges: (spec.loadBalancerSourceRanges ?? []).map((r: string) => r.trim()),
    externalLocal: spec.externalTrafficPolicy === 'Local',
    clientIPAffinity: spec.sessionAffinity === 'ClientIP',
  };
}

function readSlice(o: Obj): SnapEndpoint[] {
  const family: Family | undefined = o.addressType === 'IPv4' ? 4 : o.addressType === 'IPv6' ? 6 : undefined;
  if (!family) return [];
  const service = `${o.metadata.namespace ?? 'default'}/${o.metadata.labels['kubernetes.io/service-name']}`;
  const ports = (o.ports ?? []).map((p: Obj) => ({ name: p.name ?? '', proto: proto(p.protocol), port: p.port }));
  return (o.endpoints ?? []).map((e: Obj) => {
    if (!e.targetRef?.name) throw new Error(`${service}: data-plane fixtures name each endpoint's pod in targetRef`);
    return {
      service,
      family,
      addr: canon(e.addresses[0]),
      pod: e.targetRef.name,
      node: e.nodeName,
      ready: e.conditions?.ready !== false,
      ports,
    };
  });
}

export function readSnapshot(file: string): Snapshot {
  const objs = objectsOf(fs.readFileSync(file, 'utf8'));
  const config = objs.find((o) => o.kind === 'KubeProxyConfiguration');
  const nodes: SnapNode[] = objs
    .filter((o) => o.kind === 'Node')
    .map((o) => ({
      name: o.metadata.name,
      internalIPs: (o.status?.addresses ?? []).filter((a: Obj) => a.type === 'InternalIP').map((a: Obj) => canon(a.address)),
      podCIDRs: o.spec?.podCIDRs ?? (o.spec?.podCIDR ? [o.spec.podCIDR] : []),
    }));
  const nodeName = config?.hostnameOverride ?? (nodes.length === 1 ? nodes[0].name : undefined);
  if (!nodeName) throw new Error(`${file}: name the node with hostnameOverride`);
  return {
    file,
    nodeName,
    clusterCIDRs: String(config?.clusterCIDR ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean),
    nodes,
    services: objs.filter((o) => o.kind === 'Service').map(readService),
    endpoints: objs.filter((o) => o.kind === 'EndpointSlice').flatMap(readSlice),
  };
}

export function service(snap: Snapshot, key: string): SnapService {
  const s = snap.services.find((x) => x.key === key);
  if (!s) throw new Error(`${snap.file}: no Service ${key}`);
  return s;
}

export function port(svc: SnapService, name: string): SnapPort {
  const p = svc.ports.find((x) => x.name === name);
  if (!p) throw new Error(`Service ${svc.key} has no port ${name}`);
  return p;
}

export function clusterIP(svc: SnapService, family: Family): string {
  const ip = svc.clusterIPs.find((a) => familyOf(a) === family);
  if (!ip) throw new Error(`Service ${svc.key} has no IPv${family} cluster IP`);
  return ip;
}

export interface Expected {
  addr: string;
  pod: string;
  node: string | undefined;
  targetPort: number;
}

/**
 * The endpoints that may answer a Service port: ready endpoints of the family that carry
 * the port (by name and protocol); `localOnly` keeps those on the snapshot's node.
 */
export function readyEndpoints(snap: Snapshot, key: string, portName: string, family: Family, localOnly = false): Expected[] {
  const sp = port(service(snap, key), portName);
  const seen = new Map<string, Expected>();
  for (const e of snap.endpoints) {
    if (e.service !== key || e.family !== family || !e.ready) continue;
    if (localOnly && e.node !== snap.nodeName) continue;
    const ep = e.ports.find((p) => p.name === sp.name && p.proto === sp.proto);
    if (ep && !seen.has(e.addr)) seen.set(e.addr, { addr: e.addr, pod: e.pod, node: e.node, targetPort: ep.port });
  }
  return [...seen.values()].sort((a, b) => a.addr.localeCompare(b.addr));
}

export function thisNode(snap: Snapshot): SnapNode {
  const n = snap.nodes.find((x) => x.name === snap.nodeName);
  if (!n) throw new Error(`${snap.file}: no Node ${snap.nodeName}`);
  return n;
}

/** The node's primary IP of a family: its first InternalIP of that family. */
export function nodeIP(snap: Snapshot, family: Family): string {
  const ip = thisNode(snap).internalIPs.find((a) => familyOf(a) === family);
  if (!ip) throw new Error(`${snap.file}: node ${snap.nodeName} has no IPv${family} InternalIP`);
  return ip;
}

export function inSourceRanges(svc: SnapService, addr: string): boolean {
  const ip = parseIP(addr)!;
  return svc.sourceRanges.some((r) => {
    const c = parseCIDR(r);
    return c !== null && cidrContains(c.cidr, ip);
  });
}

/** Whether CIDR (or address) `inner` lies wholly inside CIDR `outer`. */
export function within(inner: string, outer: string): boolean {
  const o = parseCIDR(outer);
  const i = inner.includes('/') ? parseCIDR(inner)?.cidr : { addr: parseIP(inner)!, prefix: familyOf(inner) === 6 ? 128 : 32 };
  if (!o || !i) throw new Error(`not a CIDR: ${o ? inner : outer}`);
  return i.prefix >= o.cidr.prefix && cidrContains(o.cidr, i.addr);
}
