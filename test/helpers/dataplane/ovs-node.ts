// The node of the namespace cluster as a userspace Open vSwitch bridge loaded with
// `kproxc compile --backend ovs` (docs/dataplane-tests.md, "The OVS variant"):
//
//   client pods ──┐
//   external ─────┤ br-int (netdev datapath, kproxc's flows) ── node port ── node's kernel
//                 │                                                        ├─ veth ── endpoint pods
//                 │                                                        └─ veth ── worker-2
//
// ovs-vswitchd runs inside the node namespace, so every device it makes (internal ports are
// tap devices) appears there; the client pods' and the external client's ports are such
// taps, moved into their namespaces. OVS keeps sending to a tap it can no longer see, by
// design ("if the device is in another network namespace ... send the packets anyway",
// netdev-linux.c). Endpoints hang off the node's kernel instead: kproxc's pipeline ends in
// NORMAL, which forwards a DNATed frame by the MAC its client addressed, the gateway's.
// The node routes it on to the endpoint; had that route led back into the bridge, the
// packet would pass conntrack zone 65520 a second time as a new connection whose reply
// tuple is the Service connection's, and the reply would miss its un-DNAT.
import { kproxc } from '../kproxc.js';
import type { Netns } from '../netns.js';
import { BRIDGE, type Ovs, startOvs } from '../ovs.js';
import type { NodeBackend } from './cluster.js';
import { ofFamily, type PodPlan, type TopologyPlan } from './plan.js';
import { type Family, familyOf } from './snapshot.js';
import { addrLine, attachPod, defaultRoutes, gatewayLines, hostPrefix, interfaceTag, ipBatch, newNamespace, podRoutes, podSideLines, type Topology } from './topology.js';

export const OVS_PREFIX = 'opk';

/**
 * Antrea's virtual NodePort addresses (docs/ovs-backend.md, table 13): Antrea's agent redirects
 * NodePort traffic to them, and the pipeline treats them as a NodePort address of the node.
 */
export const VIRTUAL_NODEPORT_IP: Record<Family, string> = { 4: '169.254.0.252', 6: 'fc01::aabb:ccdd:eefe' };

/** The pipeline's DNAT zones (docs/ovs-backend.md): IPv4 and IPv6. */
const DNAT_ZONES = [65520, 65510];

/**
 * The userspace conntrack forgets a closed TCP connection after 30 s; an endpoint's kernel
 * keeps it in TIME_WAIT for 60 s. A client port reused in between gets a DNAT tuple the
 * endpoint still holds: the endpoint answers the SYN with the old connection's ACK, which
 * the datapath drops as out of window, and the connection hangs (measured: 5 of 40 such
 * reuses). The kernel datapath's conntrack keeps closed connections 120 s, so the node's
 * DNAT zones get that timeout too. `tcp_close` is the timer of TIME_WAIT in the userspace
 * datapath (`tcp_time_wait` alone did not change it).
 */
function rememberClosedConnections(ovs: Ovs): void {
  ovs.vsctl(['--', '--id=@dp', 'create', 'Datapath', 'datapath_version=0', '--', 'set', 'Open_vSwitch', '.', 'datapaths:netdev=@dp']);
  for (const zone of DNAT_ZONES) ovs.vsctl(['add-zone-tp', 'netdev', `zone=${zone}`, 'tcp_time_wait=120', 'tcp_close=120']);
}

export interface OvsNode extends NodeBackend {
  /** The private Open vSwitch of the node; between build and teardown. */
  readonly ovs: Ovs;
}

export function ovsNode(): OvsNode {
  let ovs: (Ovs & { stop(): void }) | undefined;
  const running = (): Ovs & { stop(): void } => {
    if (!ovs) throw new Error('the node has no running Open vSwitch');
    return ovs;
  };

  /** A bridge port that is a tap device of ovs-vswitchd, moved from the node into `ns`. */
  const tapPort = (node: Netns, ns: Netns, dev: string, ofport: number): void => {
    running().vsctl(['add-port', BRIDGE, dev, '--', 'set', 'Interface', dev, 'type=internal', `ofport_request=${ofport}`]);
    if (ns !== node) ipBatch(node, [`link set ${dev} netns ${ns.name}`]);
  };

  function build(plan: TopologyPlan, track: (ns: Netns) => void): Topology {
    const tag = interfaceTag();
    const { config } = plan;
    const lanLine = (a: string, dev: string) => addrLine(a, dev, config.lanPrefix[familyOf(a)]);
    const viaNode = (a: string) => ofFamily(plan.node.lanAddrs, familyOf(a))[0];

    const node = newNamespace(OVS_PREFIX, 'node', track, true);
    ovs = startOvs({ datapath: 'netdev', netns: node.name, tag: OVS_PREFIX });
    rememberClosedConnections(ovs);

    // The node's port on the bridge holds its LAN addresses and the client pods' gateway.
    const nodePort = `${tag}n`;
    tapPort(node, node, nodePort, 1);
    ipBatch(node, [
      `link set ${nodePort} up`,
      ...plan.node.lanAddrs.map((a) => lanLine(a, nodePort)),
      ...gatewayLines(plan.node, plan.clients, nodePort),
      ...plan.clients.flatMap((c) => podRoutes(c, nodePort)),
      ...defaultRoutes(config),
    ]);

    // Service addresses the external client sends to the node. Whatever of it the bridge
    // lets through untranslated, the node answers with ICMP unreachable, so a packet that
    // should have been dropped on the bridge fails differently (not by a timeout).
    const throughNode = [...plan.vips, ...Object.values(VIRTUAL_NODEPORT_IP)].filter(viaNode);
    ipBatch(node, throughNode.map((v) => `route add unreachable ${v}/${hostPrefix(v)}`));

    const external = newNamespace(OVS_PREFIX, 'external', track, false);
    const extPort = `${tag}x`;
    tapPort(node, external, extPort, 2);
    ipBatch(external, [
      `link set ${extPort} up`,
      ...config.router.map((a) => lanLine(a, extPort)),
      ...config.outsideSources.map((a) => addrLine(a, 'lo', hostPrefix(a))),
      ...throughNode.map((v) => `route add ${v}/${hostPrefix(v)} via ${viaNode(v)}`),
    ]);

    // Another node is reached over a link of its own, as Antrea reaches it through its
    // tunnel, with its pods' addresses on that link.
    const remotes = new Map<string, Netns>();
    plan.others.forEach((other, i) => {
      const ns = newNamespace(OVS_PREFIX, `remote${i}`, track, false);
      const asPod: PodPlan = { name: other.name, node: other.name, addrs: plan.remotePods.filter((p) => p.node === other.name).flatMap((p) => p.addrs), listeners: [] };
      attachPod(node, plan.node, asPod, ns, `${tag}r${i}`);
      remotes.set(other.name, ns);
    });

    const pods = new Map<string, Netns>();
    plan.localPods.forEach((pod, i) => {
      const ns = newNamespace(OVS_PREFIX, pod.name, track, false);
      attachPod(node, plan.node, pod, ns, `${tag}p${i}`);
      pods.set(pod.name, ns);
    });
    plan.clients.forEach((pod, i) => {
      const ns = newNamespace(OVS_PREFIX, pod.name, track, false);
      const dev = `${tag}c${i}`;
      tapPort(node, ns, dev, 10 + i);
      ipBatch(ns, podSideLines(plan.node, pod, dev));
      pods.set(pod.name, ns);
    });
    return { node, external, remotes, pods };
  }

  return {
    prefix: OVS_PREFIX,
    get ovs() {
      return running();
    },
    build,
    /** `kproxc compile --backend ovs FILE` loaded with `ovs-ofctl -O OpenFlow15 bundle`: a full replace. */
    async load(file, _topology, layout) {
      if (layout !== undefined) throw new Error('a kind of nftables table means nothing to the ovs node');
      const r = await kproxc(['compile', '--backend', 'ovs', file]);
      if (r.code !== 0) throw new Error(`kproxc compile --backend ovs ${file} exited ${r.code}: ${r.stderr}`);
      running().loadBundle(r.stdout);
    },
    teardown() {
      const o = ovs;
      ovs = undefined;
      o?.stop();
    },
  };
}
