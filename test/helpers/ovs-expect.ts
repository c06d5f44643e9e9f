// What a packet to each Service address should meet, derived from the model and the shared
// endpoint categorisation (never from the flows under test), and what a trace shows it met.
//
// Antrea's semantics: ClusterIP traffic is served by the internal endpoints (local ones
// when internalTrafficPolicy is Local); NodePort, external-IP and load-balancer traffic by
// the external endpoints (local ones when externalTrafficPolicy is Local), except that local
// Pods reach all cluster endpoints; an empty set rejects (packet-in to the controller). Our
// extensions: a source outside loadBalancerSourceRanges is dropped at a load-balancer IP; a
// ClusterIP's unused port is rejected and an unallocated ServiceCIDR address dropped.
import { categorizeEndpoints, externallyAccessible } from '../../src/model/categorize.js';
import { allowedSources } from '../../src/model/firewall.js';
import { servicePortKey, type Endpoint, type FamilyModel, type Protocol, type ServicePort } from '../../src/model/types.js';
import { cidrContains, formatIP, ipEquals, isLoopback, parseIP, type CIDR, type IP } from '../../src/net/ip.js';
import type { PreparedTracer } from '../../src/trace/backend.js';
import type { L4Protocol } from '../../src/trace/packet.js';
import { summarize } from '../../src/trace/result.js';
import type { Ovs } from './ovs.js';

export type Outcome = { kind: 'endpoints'; endpoints: string[] } | { kind: 'controller' } | { kind: 'drop' } | { kind: 'pass' };

export interface Probe {
  what: string;
  family: 4 | 6;
  protocol: Protocol;
  src: IP;
  dst: IP;
  port: number;
  expect: Outcome;
}

/** The design's virtual NodePort DNAT IPs (Antrea's VirtualNodePortDNATIPv4/v6). */
const VIRTUAL_NODEPORT_IP = { 4: parseIP('169.254.0.252')!, 6: parseIP('fc01::aabb:ccdd:eefe')! };
const OUTSIDE_CANDIDATES = { 4: ['198.18.0.99', '198.19.7.99', '100.64.9.99'], 6: ['2001:db8:ffff::99', 'fd99::99', '3fff::99'] };

function withLastByte(c: CIDR, b: number): IP {
  const bytes = new Uint8Array(c.addr.bytes);
  bytes[bytes.length - 1] = b;
  return { family: c.addr.family, bytes };
}

function served(eps: Endpoint[]): Outcome {
  return eps.length === 0 ? { kind: 'controller' } : { kind: 'endpoints', endpoints: eps.map((e) => e.key).sort() };
}

function nodePortIPs(m: FamilyModel): IP[] {
  const ips = m.nodePortAddresses.matchAll ? m.nodeIPs.filter((ip) => !isLoopback(ip)) : m.nodePortAddresses.ips;
  return [...ips, VIRTUAL_NODEPORT_IP[m.family]];
}

/** Every address the model gives a Service, so a chosen source or destination avoids them. */
function modelAddresses(m: FamilyModel): IP[] {
  return [...m.nodeIPs, ...m.servicePorts.flatMap((sp) => [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerVIPs])];
}

function outsideSource(m: FamilyModel): IP {
  const taken = modelAddresses(m);
  const nets = [...m.podCIDRs, ...m.servicePorts.flatMap((sp) => sp.loadBalancerSourceRanges)];
  for (const text of OUTSIDE_CANDIDATES[m.family]) {
    const ip = parseIP(text)!;
    if (!nets.some((c) => cidrContains(c, ip)) && !taken.some((t) => ipEquals(t, ip))) return ip;
  }
  throw new Error('no outside source address available for this snapshot');
}

/** An address of the first ServiceCIDR that no Service and no node has, if there is one. */
function unallocatedServiceAddress(m: FamilyModel): IP | undefined {
  const taken = modelAddresses(m);
  for (const c of m.serviceCIDRs) {
    for (const last of [250, 200, 150, 99]) {
      const ip = withLastByte(c, last);
      if (cidrContains(c, ip) && !taken.some((t) => ipEquals(t, ip))) return ip;
    }
  }
  return undefined;
}

export function probesFor(m: FamilyModel): Probe[] {
  const outside = outsideSource(m);
  const pod = m.podCIDRs[0] ? withLastByte(m.podCIDRs[0], 99) : undefined;
  const isPod = (ip: IP) => m.podCIDRs.some((c) => cidrContains(c, ip));
  const probes: Probe[] = [];
  const add = (sp: ServicePort, kind: string, dst: IP, port: number, src: IP, expect: Outcome) =>
    probes.push({
      what: `${servicePortKey(sp.id)} ${kind} ${formatIP(dst)}:${port} from ${formatIP(src)}`,
      family: m.family,
      protocol: sp.id.protocol,
      src,
      dst,
      port,
      expect,
    });

  for (const sp of m.servicePorts) {
    const cat = categorizeEndpoints(m.endpoints.get(servicePortKey(sp.id)) ?? [], sp, m.nodeName, m.nodeLabels);
    const serve = (local: boolean) => served(local ? cat.localEndpoints : cat.clusterEndpoints);
    const sources = [outside, ...(pod ? [pod] : [])];

    for (const src of sources) add(sp, 'ClusterIP', sp.clusterIP, sp.port, src, serve(sp.internalPolicyLocal));
    if (!externallyAccessible(sp)) continue;

    const external = (src: IP, firewall?: ReturnType<typeof allowedSources>): Outcome => {
      const allowed = !firewall || firewall.some((s) => (s.t === 'cidr' ? cidrContains(s.cidr, src) : ipEquals(s.ip, src)));
      if (!allowed) return { kind: 'drop' };
      return isPod(src) ? served(cat.clusterEndpoints) : serve(sp.externalPolicyLocal);
    };
    if (sp.nodePort !== 0) for (const ip of nodePortIPs(m)) for (const src of sources) add(sp, 'NodePort', ip, sp.nodePort, src, external(src));
    for (const ip of sp.externalIPs) for (const src of sources) add(sp, 'externalIP', ip, sp.port, src, external(src));
    const firewall = sp.loadBalancerSourceRanges.length > 0 ? allowedSources(sp, m.primaryNodeIP) : undefined;
    const inRange = firewall?.flatMap((s) => (s.t === 'cidr' ? [s.cidr.prefix < s.cidr.addr.bytes.length * 8 ? withLastByte(s.cidr, 7) : s.cidr.addr] : [s.ip])) ?? [];
    for (const ip of sp.loadBalancerVIPs) for (const src of [...sources, ...inRange]) add(sp, 'loadBalancerIP', ip, sp.port, src, external(src, firewall));
  }

  // kube-proxy's cluster-ips-check: a ClusterIP's unused port is rejected, another address
  // of a ServiceCIDR dropped; addresses outside every ServiceCIDR that no Service has pass.
  const first = m.servicePorts[0];
  if (first) {
    const used = new Set(m.servicePorts.filter((sp) => ipEquals(sp.clusterIP, first.clusterIP) && sp.id.protocol === first.id.protocol).map((sp) => sp.port));
    let port = first.port + 1;
    while (used.has(port)) port++;
    add(first, 'unused port of ClusterIP', first.clusterIP, port, outside, { kind: 'controller' });
    const stranger = outsideSource({ ...m, nodeIPs: [...m.nodeIPs, outside] });
    add(first, 'no Service at', stranger, first.port, outside, { kind: 'pass' });
    const unallocated = unallocatedServiceAddress(m);
    if (unallocated) add(first, 'unallocated ServiceCIDR address', unallocated, first.port, outside, { kind: 'drop' });
  }

  // One address and port has one owner: a Service address before a NodePort on it (kube-
  // proxy's services chain looks the addresses up first), else the first Service port in
  // the model's order.
  const seen = new Set<string>();
  const keyOf = (p: Probe) => `${p.protocol} ${formatIP(p.src)} ${formatIP(p.dst)} ${p.port}`;
  const isNodePort = (p: Probe) => p.what.includes(' NodePort ');
  const owners = new Set(probes.filter((p) => !isNodePort(p)).map(keyOf));
  return probes.filter((p) => {
    const key = keyOf(p);
    if (seen.has(key) || (isNodePort(p) && owners.has(key))) return false;
    seen.add(key);
    return true;
  });
}

export function traceFlow(p: Pick<Probe, 'family' | 'protocol' | 'src' | 'dst' | 'port'>, dpHash: number, sport: number): string {
  const l4 = p.protocol.toLowerCase();
  const [src, dst] = p.family === 4 ? ['nw_src', 'nw_dst'] : ['ipv6_src', 'ipv6_dst'];
  const word = p.family === 4 ? l4 : `${l4}6`;
  return `dp_hash=${dpHash},${word},in_port=1,${src}=${formatIP(p.src)},${dst}=${formatIP(p.dst)},${l4}_src=${sport},${l4}_dst=${p.port}`;
}

export interface TraceResult {
  outcome: Outcome;
  /** dp_hash values 1..n visit every bucket of the group the packet met (n = mask + 1). */
  dpHashes?: number;
  /** The group is too large for dp_hash selection: OVS hashes the packet's fields instead. */
  fieldHash: boolean;
}

/** What one `ofproto/trace` shows: the DNAT target, the controller, a drop or a pass. */
export function readTrace(text: string): TraceResult {
  const dnat = [...text.matchAll(/ct\(commit,table=17,zone=\d+,nat\(dst=([^)]+)\)/g)].map((m) => m[1]);
  const mask = /Megaflow: .*dp_hash=0x[0-9a-f]+\/(0x[0-9a-f]+)/.exec(text);
  const fieldHash = /bucket \d+: score/.test(text);
  const dpHashes = mask ? Number(mask[1]) + 1 : undefined;
  if (dnat.length > 1) throw new Error(`one packet, several DNATs:\n${text}`);
  if (dnat.length === 1) return { outcome: { kind: 'endpoints', endpoints: dnat }, dpHashes, fieldHash };
  if (/controller\(reason=no_match/.test(text)) return { outcome: { kind: 'controller' }, dpHashes, fieldHash };
  const actions = [...text.matchAll(/^Datapath actions: (.*)$/gm)].map((m) => m[1]);
  if (actions.length === 0) throw new Error(`no datapath actions in trace:\n${text}`);
  if (actions[actions.length - 1] === 'drop') return { outcome: { kind: 'drop' }, dpHashes, fieldHash };
  if (/nat\((src|dst)=/.test(text)) throw new Error(`a packet passed with NAT:\n${text}`);
  return { outcome: { kind: 'pass' }, dpHashes, fieldHash };
}

/** One ofproto/trace of a probe: what it showed, and whether the source was SNATed (hairpin). */
export interface Traced {
  result: TraceResult;
  snat: boolean;
}

/**
 * Every ofproto/trace of one probe over the dp_hash values that cover the group it meets, so
 * every bucket is seen; a group too large for dp_hash is hashed on the packet's fields, so
 * the source port is varied instead and only a sample is seen (sampled).
 */
export function traceAllBuckets(ovs: Ovs, p: Pick<Probe, 'family' | 'protocol' | 'src' | 'dst' | 'port'>, sport: number): { traces: Traced[]; sampled: boolean } {
  const once = (hash: number, port: number): Traced => {
    const text = ovs.trace(traceFlow(p, hash, port));
    return { result: readTrace(text), snat: /nat\(src=/.test(text) };
  };
  const first = once(1, sport);
  const traces = [first];
  if (first.result.fieldHash) {
    for (let port = sport + 1; port < sport + 64; port++) traces.push(once(1, port));
  } else {
    for (let h = 2; h <= (first.result.dpHashes ?? 1); h++) traces.push(once(h, sport));
  }
  return { traces, sampled: first.result.fieldHash };
}

type ProbePacket = Pick<Probe, 'protocol' | 'src' | 'dst' | 'port'>;

/** What `kproxc trace --backend ovs` says of a probe, as an Outcome, and which endpoints are reached SNATed. */
export function walkedOutcome(tracer: PreparedTracer, p: ProbePacket, sport: number): { outcome: Outcome; snat: Map<string, boolean> } {
  const r = tracer.trace({ protocol: p.protocol.toLowerCase() as L4Protocol, src: p.src, dst: p.dst, sport, dport: p.port });
  const sum = summarize(r);
  const snat = new Map(r.branches.filter((b) => b.endpoint).map((b) => [b.endpoint!, b.masquerade]));
  const outcome: Outcome =
    sum.verdict === 'dnat'
      ? { kind: 'endpoints', endpoints: [...sum.endpoints].sort() }
      : { kind: sum.verdict === 'reject' ? 'controller' : sum.verdict === 'none' ? 'pass' : 'drop' };
  return { outcome, snat };
}
