// The shape of the namespace cluster, decided from the snapshots before anything is created:
// which pods exist and where, which addresses and ports they serve, which addresses the
// node, the other nodes and the off-cluster client hold. Pure data, so the builder only
// carries it out and a test can print it when something fails.
import { formatIP, parseCIDR } from '../../../src/net/ip.js';
import { canon, type Family, familyOf, type Proto, type Snapshot, type SnapNode, within } from './snapshot.js';

export interface Listener {
  proto: Proto;
  addr: string;
  port: number;
}

export interface PodPlan {
  name: string;
  node: string;
  addrs: string[];
  listeners: Listener[];
}

export interface NodePlan {
  name: string;
  lanAddrs: string[];
  podCIDRs: string[];
  /** The first address of each pod CIDR: the node side of every pod's veth holds it. */
  gateways: string[];
}

/** What the snapshot cannot say: the LAN's prefixes, the router, the client pods. */
export interface HarnessConfig {
  lanPrefix: Record<Family, number>;
  /** The off-cluster namespace's LAN addresses; the nodes' default routes point at them. */
  router: string[];
  /** Further source addresses of the off-cluster client (e.g. inside and outside source ranges). */
  outsideSources: string[];
  /** Pods on the node that only ever connect; their addresses lie in the node's pod CIDRs. */
  clients: { name: string; addrs: string[] }[];
}

export interface TopologyPlan {
  config: HarnessConfig;
  node: NodePlan;
  others: NodePlan[];
  localPods: PodPlan[];
  remotePods: PodPlan[];
  clients: PodPlan[];
  /** External and load-balancer IPs: the router sends traffic for them to the node. */
  vips: string[];
}

/** The first host address of a CIDR (10.244.1.0/24 -> 10.244.1.1). */
export function firstHost(cidr: string): string {
  const c = parseCIDR(cidr);
  if (!c) throw new Error(`not a CIDR: ${cidr}`);
  const bytes = new Uint8Array(c.cidr.addr.bytes);
  bytes[bytes.length - 1] |= 1;
  return formatIP({ family: c.cidr.addr.family, bytes });
}

function nodePlan(n: SnapNode): NodePlan {
  return { name: n.name, lanAddrs: n.internalIPs, podCIDRs: n.podCIDRs, gateways: n.podCIDRs.map(firstHost) };
}

/** Every pod named by an endpoint of any snapshot, with the union of what it serves. */
function podsOf(snapshots: Snapshot[]): PodPlan[] {
  const pods = new Map<string, PodPlan>();
  for (const snap of snapshots) {
    for (const e of snap.endpoints) {
      if (!e.node) throw new Error(`${snap.file}: endpoint ${e.addr} of ${e.service} has no nodeName`);
      const pod = pods.get(e.pod) ?? { name: e.pod, node: e.node, addrs: [], listeners: [] };
      if (pod.node !== e.node) throw new Error(`pod ${e.pod} is on ${pod.node} and ${e.node}`);
      if (!pod.addrs.includes(e.addr)) pod.addrs.push(e.addr);
      for (const p of e.ports) {
        if (!pod.listeners.some((l) => l.proto === p.proto && l.addr === e.addr && l.port === p.port)) {
          pod.listeners.push({ proto: p.proto, addr: e.addr, port: p.port });
        }
      }
      pods.set(e.pod, pod);
    }
  }
  return [...pods.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A snapshot whose pod CIDRs fall outside its clusterCIDR makes the node masquerade its own
 * pods' traffic (detectLocalMode ClusterCIDR), and a client pod outside the node's pod
 * CIDRs is not a pod at all; both would make a scenario test something else than it says.
 */
function checkAddressing(snap: Snapshot, config: HarnessConfig): void {
  for (const n of snap.nodes) {
    for (const p of n.podCIDRs) {
      const fam = snap.clusterCIDRs.filter((c) => familyOf(c) === familyOf(p));
      if (fam.length && !fam.some((c) => within(p, c))) {
        throw new Error(`${snap.file}: pod CIDR ${p} of ${n.name} is outside clusterCIDR ${fam.join(', ')}`);
      }
    }
  }
  const podCIDRs = snap.nodes.find((n) => n.name === snap.nodeName)?.podCIDRs ?? [];
  for (const c of config.clients) {
    for (const a of c.addrs) {
      if (!podCIDRs.some((p) => within(a, p))) throw new Error(`client ${c.name}'s ${a} is outside ${snap.nodeName}'s pod CIDRs`);
    }
  }
}

export function planTopology(snapshots: Snapshot[], config: HarnessConfig): TopologyPlan {
  for (const s of snapshots) checkAddressing(s, config);
  const first = snapshots[0];
  for (const s of snapshots) {
    if (s.nodeName !== first.nodeName) throw new Error(`${s.file} is for node ${s.nodeName}, ${first.file} for ${first.nodeName}`);
    if (JSON.stringify(s.nodes) !== JSON.stringify(first.nodes)) throw new Error(`${s.file} and ${first.file} disagree on the Nodes`);
  }
  const node = first.nodes.find((n) => n.name === first.nodeName);
  if (!node) throw new Error(`${first.file}: no Node ${first.nodeName}`);
  const pods = podsOf(snapshots);
  const vips = new Set<string>();
  for (const s of snapshots) for (const svc of s.services) for (const ip of [...svc.externalIPs, ...svc.lbIPs]) vips.add(ip);
  return {
    config: { ...config, router: config.router.map(canon), outsideSources: config.outsideSources.map(canon) },
    node: nodePlan(node),
    others: first.nodes.filter((n) => n.name !== node.name).map(nodePlan),
    localPods: pods.filter((p) => p.node === node.name),
    remotePods: pods.filter((p) => p.node !== node.name),
    clients: config.clients.map((c) => ({ name: c.name, node: node.name, addrs: c.addrs.map(canon), listeners: [] })),
    vips: [...vips].sort(),
  };
}

export function ofFamily(addrs: string[], family: Family): string[] {
  return addrs.filter((a) => familyOf(a) === family);
}
