// Carries out a TopologyPlan with network namespaces, veth pairs, one bridge and routes:
//
//   external (router + off-cluster client, LAN bridge) ── node (kproxc ruleset) ── pods
//          └── remote node(s) (endpoints of other nodes on their loopback)
//
// Every link is created inside our own namespaces (`ip -n NS link add ... peer ... netns
// OTHER`), so no interface ever appears in the root namespace, and deleting the namespaces
// removes every link. Each namespace is handed to `track` as soon as it exists, so a build
// that fails half way is still cleaned up by the caller.
import { spawnSync } from 'node:child_process';
import { createNetns, type Netns } from '../netns.js';
import { type HarnessConfig, type NodePlan, ofFamily, type PodPlan, type TopologyPlan } from './plan.js';
import { familyOf } from './snapshot.js';

export const NETNS_PREFIX = 'pkt';

export interface Topology {
  node: Netns;
  external: Netns;
  /** One namespace per other node, by node name. */
  remotes: Map<string, Netns>;
  /** Local endpoint pods and client pods, by pod name. */
  pods: Map<string, Netns>;
}

let built = 0;

/** Runs `ip` commands inside a namespace in one batch; throws with ip's own message. */
export function ipBatch(ns: Netns, lines: string[]): void {
  const r = spawnSync('ip', ['-n', ns.name, '-batch', '-'], { input: lines.join('\n') + '\n', encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip -batch in ${ns.name} failed: ${r.stderr || r.error}\n${lines.join('\n')}`);
}

/** An address with its prefix: the LAN prefix, or a host route for pod addresses. */
export function addrLine(addr: string, dev: string, prefix: number): string {
  return familyOf(addr) === 6 ? `addr add ${addr}/${prefix} dev ${dev} nodad` : `addr add ${addr}/${prefix} dev ${dev}`;
}

export const hostPrefix = (addr: string) => (familyOf(addr) === 6 ? 128 : 32);

/** Routes to every other node's pod CIDRs through that node's LAN address of the family. */
function podCIDRRoutes(self: string, nodes: NodePlan[]): string[] {
  const lines: string[] = [];
  for (const n of nodes) {
    if (n.name === self) continue;
    for (const cidr of n.podCIDRs) {
      const via = ofFamily(n.lanAddrs, familyOf(cidr))[0];
      if (via) lines.push(`route add ${cidr} via ${via}`);
    }
  }
  return lines;
}

export function defaultRoutes(config: HarnessConfig): string[] {
  return config.router.map((r) => `route add default via ${r}`);
}

export function newNamespace(prefix: string, role: string, track: (ns: Netns) => void, forward: boolean): Netns {
  const ns = createNetns(prefix, role);
  track(ns);
  // Duplicate address detection would keep IPv6 addresses tentative for a second or two.
  const settings = ['net.ipv6.conf.all.accept_dad=0', 'net.ipv6.conf.default.accept_dad=0'];
  // The node's reject rules answer with ICMP, which the kernel limits per destination to
  // a burst of six and then one a second: a run of refused probes would see later refusals
  // as timeouts. The limit is the kernel's policy, not the ruleset's, so the node lifts it.
  if (forward) settings.push('net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1', 'net.ipv4.icmp_ratelimit=0', 'net.ipv6.icmp.ratelimit=0');
  ns.exec('sysctl', ['-q', '-w', ...settings]);
  ipBatch(ns, ['link set lo up']);
  return ns;
}

/** The node's gateway addresses for a pod, each with the pod's first address of its family. */
function gatewaysOf(nodePlan: NodePlan, pod: PodPlan): { gw: string; own: string }[] {
  return nodePlan.gateways.flatMap((gw) => {
    const own = ofFamily(pod.addrs, familyOf(gw));
    return own.length ? [{ gw, own: own[0] }] : [];
  });
}

/**
 * The pod's side of its link `dev`: /32 and /128 addresses, default route via the gateway
 * with the pod's first address of the family as source (a client pod holds several, and
 * the scenarios expect that one unless they name another).
 */
export function podSideLines(nodePlan: NodePlan, pod: PodPlan, dev: string): string[] {
  const lines = [`link set ${dev} up`, ...pod.addrs.map((a) => addrLine(a, dev, hostPrefix(a)))];
  for (const { gw, own } of gatewaysOf(nodePlan, pod)) lines.push(`route add ${gw} dev ${dev} src ${own}`, `route add default via ${gw} dev ${dev} src ${own}`);
  return lines;
}

/** The node's routes to a pod's addresses over `dev`. */
export function podRoutes(pod: PodPlan, dev: string): string[] {
  return pod.addrs.map((a) => `route add ${a}/${hostPrefix(a)} dev ${dev}`);
}

/** The node's gateway addresses (host prefixes) on `dev`, for the families the pods use. */
export function gatewayLines(nodePlan: NodePlan, pods: PodPlan[], dev: string): string[] {
  const gws = new Set(pods.flatMap((p) => gatewaysOf(nodePlan, p).map((g) => g.gw)));
  return [...gws].map((gw) => addrLine(gw, dev, hostPrefix(gw)));
}

/** A pod behind a veth pair on the node; the node side holds the gateway addresses. */
export function attachPod(node: Netns, nodePlan: NodePlan, pod: PodPlan, ns: Netns, dev: string): void {
  ipBatch(node, [`link add ${dev} type veth peer name eth0 netns ${ns.name}`]);
  ipBatch(node, [`link set ${dev} up`, ...podRoutes(pod, dev), ...gatewayLines(nodePlan, [pod], dev)]);
  ipBatch(ns, podSideLines(nodePlan, pod, 'eth0'));
}

/** Interface names: at most 15 characters, unique per process and topology. */
export function interfaceTag(): string {
  return `k${process.pid.toString(36)}${(built++).toString(36)}`;
}

export function buildTopology(plan: TopologyPlan, track: (ns: Netns) => void): Topology {
  const tag = interfaceTag();
  const { config } = plan;
  const lanLine = (a: string, dev: string) => addrLine(a, dev, config.lanPrefix[familyOf(a)]);

  const external = newNamespace(NETNS_PREFIX, 'external', track, false);
  const bridge = `${tag}br`;
  ipBatch(external, [`link add ${bridge} type bridge`, `link set ${bridge} up`, ...config.router.map((a) => lanLine(a, bridge))]);
  // The LAN bridge is a plain switch: bridged frames skip the external namespace's netfilter.
  external.exec('sysctl', ['-e', '-q', '-w', 'net.bridge.bridge-nf-call-iptables=0', 'net.bridge.bridge-nf-call-ip6tables=0']);
  ipBatch(external, [
    ...config.outsideSources.map((a) => addrLine(a, 'lo', hostPrefix(a))),
    ...plan.vips.map((v) => `route add ${v}/${hostPrefix(v)} via ${ofFamily(plan.node.lanAddrs, familyOf(v))[0]}`),
  ]);

  const lanPort = (ns: Netns, i: number, addrs: string[]): string => {
    const dev = `${tag}l${i}`;
    const peer = `${tag}b${i}`;
    ipBatch(ns, [`link add ${dev} type veth peer name ${peer} netns ${external.name}`, `link set ${dev} up`, ...addrs.map((a) => lanLine(a, dev))]);
    ipBatch(external, [`link set ${peer} master ${bridge}`, `link set ${peer} up`]);
    return dev;
  };
  const allNodes = [plan.node, ...plan.others];

  const node = newNamespace(NETNS_PREFIX, 'node', track, true);
  lanPort(node, 0, plan.node.lanAddrs);
  ipBatch(node, [...podCIDRRoutes(plan.node.name, allNodes), ...defaultRoutes(config)]);

  const remotes = new Map<string, Netns>();
  plan.others.forEach((other, i) => {
    const ns = newNamespace(NETNS_PREFIX, `remote${i}`, track, false);
    lanPort(ns, i + 1, other.lanAddrs);
    // The other node's pods are addresses on its loopback: the dummy link type is not
    // available on every kernel the suite runs on, and loopback delivers just the same.
    const podAddrs = plan.remotePods.filter((p) => p.node === other.name).flatMap((p) => p.addrs);
    ipBatch(ns, [
      ...podAddrs.map((a) => addrLine(a, 'lo', hostPrefix(a))),
      ...podCIDRRoutes(other.name, allNodes),
      ...defaultRoutes(config),
    ]);
    remotes.set(other.name, ns);
  });

  const pods = new Map<string, Netns>();
  [...plan.localPods, ...plan.clients].forEach((pod, i) => {
    const ns = newNamespace(NETNS_PREFIX, pod.name, track, false);
    attachPod(node, plan.node, pod, ns, `${tag}p${i}`);
    pods.set(pod.name, ns);
  });
  return { node, external, remotes, pods };
}
