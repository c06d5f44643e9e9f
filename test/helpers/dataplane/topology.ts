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
function addrLine(addr: string, dev: string, prefix: number): string {
  return familyOf(addr) === 6 ? `addr add ${addr}/${prefix} dev ${dev} nodad` : `addr add ${addr}/${prefix} dev ${dev}`;
}

const hostPrefix = (addr: string) => (familyOf(addr) === 6 ? 128 : 32);

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

function defaultRoutes(config: HarnessConfig): string[] {
  return config.router.map((r) => `route add default via ${r}`);
}

function newNamespace(role: string, track: (ns: Netns) => void, forward: boolean): Netns {
  const ns = createNetns(NETNS_PREFIX, role);
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

/**
 * A pod behind a veth pair on the node: /32 and /128 addresses, default route via the
 * gateway with the pod's first address of the family as source (a client pod holds
 * several, and the scenarios expect that one unless they name another).
 */
function attachPod(node: Netns, nodePlan: NodePlan, pod: PodPlan, ns: Netns, dev: string): void {
  ipBatch(node, [`link add ${dev} type veth peer name eth0 netns ${ns.name}`]);
  const nodeSide = [`link set ${dev} up`];
  const podSide = ['link set eth0 up', ...pod.addrs.map((a) => addrLine(a, 'eth0', hostPrefix(a)))];
  for (const a of pod.addrs) nodeSide.push(`route add ${a}/${hostPrefix(a)} dev ${dev}`);
  for (const gw of nodePlan.gateways) {
    const own = ofFamily(pod.addrs, familyOf(gw));
    if (own.length === 0) continue;
    nodeSide.push(addrLine(gw, dev, hostPrefix(gw)));
    podSide.push(`route add ${gw} dev eth0 src ${own[0]}`, `route add default via ${gw} dev eth0 src ${own[0]}`);
  }
  ipBatch(node, nodeSide);
  ipBatch(ns, podSide);
}

export function buildTopology(plan: TopologyPlan, track: (ns: Netns) => void): Topology {
  // Interface names: at most 15 characters, unique per process and topology.
  const tag = `k${process.pid.toString(36)}${(built++).toString(36)}`;
  const { config } = plan;
  const lanLine = (a: string, dev: string) => addrLine(a, dev, config.lanPrefix[familyOf(a)]);

  const external = newNamespace('external', track, false);
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

  const node = newNamespace('node', track, true);
  lanPort(node, 0, plan.node.lanAddrs);
  ipBatch(node, [...podCIDRRoutes(plan.node.name, allNodes), ...defaultRoutes(config)]);

  const remotes = new Map<string, Netns>();
  plan.others.forEach((other, i) => {
    const ns = newNamespace(`remote${i}`, track, false);
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
    const ns = newNamespace(pod.name, track, false);
    attachPod(node, plan.node, pod, ns, `${tag}p${i}`);
    pods.set(pod.name, ns);
  });
  return { node, external, remotes, pods };
}
