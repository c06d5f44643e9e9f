// A namespace cluster for one suite: the topology of plan.ts built by a node backend, an
// echo server in every namespace that holds endpoints, and the node's data plane loaded
// from the real `kproxc` CLI. The default backend is the nftables one (topology.ts, the
// real `nft`); ovs-node.ts is the Open vSwitch one. Everything it creates is destroyed by
// destroy(), which the suite calls in afterAll and which is safe to call twice or after a
// failed build.
import { kproxc } from '../kproxc.js';
import { TABLE_KINDS, type TableKind } from '../../../src/backends/nftables/layout.js';
import { kindArgs } from '../fixtures.js';
import type { Netns } from '../netns.js';
import { type HarnessConfig, planTopology, type TopologyPlan } from './plan.js';
import { probe, type ProbeJob, type ProbeResult, type Server, startServer } from './processes.js';
import { readSnapshot, type Snapshot } from './snapshot.js';
import { buildTopology, NETNS_PREFIX, type Topology } from './topology.js';

/** How the node is built and programmed: what differs between the nftables and OVS suites. */
export interface NodeBackend {
  /** Namespaces are named kproxc-<prefix>-<pid>-…; stale.ts removes a dead run's by it. */
  readonly prefix: string;
  /** Builds the topology, handing each namespace to `track` as soon as it exists. */
  build(plan: TopologyPlan, track: (ns: Netns) => void): Topology;
  /** Compiles `file` with kproxc for this backend (nftables: a table of `kind`) and loads the output into the node. */
  load(file: string, topology: Topology, kind?: NftLayout): Promise<void>;
  /** Stops what build started other than namespaces; synchronous (exit hook), safe twice. */
  teardown(): void;
}

/** A kind of nftables table (kube-proxy's layout of a release, or fast-load). */
export type NftLayout = TableKind;

/** `kproxc compile --layout LAYOUT --kube-proxy-version V FILE | nft -f -` on the node: a full, atomic replace of its tables. */
export function nftablesNode(): NodeBackend {
  return {
    prefix: NETNS_PREFIX,
    build: buildTopology,
    async load(file, topology, kind = TABLE_KINDS[0]) {
      const r = await kproxc(['compile', ...kindArgs(kind), file]);
      if (r.code !== 0) throw new Error(`kproxc compile ${kindArgs(kind).join(' ')} ${file} exited ${r.code}: ${r.stderr}`);
      topology.node.nft(['-f', '-'], r.stdout);
    },
    teardown() {},
  };
}

/**
 * The part of the cluster the snapshots cannot give: a LAN the nodes share with an
 * off-cluster client that doubles as their router, that client's extra source addresses
 * (one inside storefront's loadBalancerSourceRanges, one outside), and two dual-stack
 * client pods on the node.
 */
export const DEFAULT_CONFIG: HarnessConfig = {
  lanPrefix: { 4: 24, 6: 64 },
  router: ['192.168.10.1', 'fd00:168:10::1'],
  outsideSources: ['203.0.113.7', '198.18.0.7'],
  // Three IPv4 sources each: session affinity is per source address, and six sources make
  // it near certain that some stay on an endpoint a later snapshot keeps.
  clients: [
    { name: 'client-a', addrs: ['10.244.1.100', '10.244.1.102', '10.244.1.104', 'fd00:244:1::100'] },
    { name: 'client-b', addrs: ['10.244.1.101', '10.244.1.103', '10.244.1.105', 'fd00:244:1::101'] },
  ],
};

/** Source ports for UDP probes: below 32768, where the kernel's ephemeral range starts. */
const UDP_PORT_FIRST = 20000;
const UDP_PORT_LAST = 32000;

/** Where a probe runs: a pod on the node (local endpoint or client), or the off-cluster client. */
export type Origin = string;
export const EXTERNAL: Origin = 'external';

export class Cluster<B extends NodeBackend = NodeBackend> {
  readonly namespaces: Netns[] = [];
  readonly servers: Server[] = [];
  topology?: Topology;
  /** The snapshot whose ruleset the node holds now. */
  current?: Snapshot;
  private destroyed = false;
  private nextUdpPort = UDP_PORT_FIRST;

  private constructor(
    readonly snapshots: Snapshot[],
    readonly plan: TopologyPlan,
    readonly backend: B,
  ) {}

  /**
   * Builds the namespaces for every pod any of the snapshots names (so that a later snapshot
   * finds its pods already there) and starts their servers. Loads no ruleset.
   */
  static async create<B extends NodeBackend = NodeBackend>(files: string[], config: HarnessConfig = DEFAULT_CONFIG, backend?: B): Promise<Cluster<B>> {
    const snapshots = files.map(readSnapshot);
    const cluster = new Cluster<B>(snapshots, planTopology(snapshots, config), backend ?? (nftablesNode() as B));
    // A worker that exits without running afterAll (an uncaught error, process.exit) still
    // removes the namespaces; only SIGKILL leaves them, for stale.ts to find.
    process.once('exit', cluster.removeNamespaces);
    try {
      cluster.topology = cluster.backend.build(cluster.plan, (ns) => cluster.namespaces.push(ns));
      await cluster.startServers();
    } catch (e) {
      await cluster.destroy();
      throw e;
    }
    return cluster;
  }

  private async startServers(): Promise<void> {
    const t = this.topology!;
    for (const pod of this.plan.localPods) {
      this.servers.push(await startServer(t.pods.get(pod.name)!, pod.name, pod.listeners));
    }
    for (const [nodeName, ns] of t.remotes) {
      const listeners = this.plan.remotePods.filter((p) => p.node === nodeName).flatMap((p) => p.listeners.map((l) => ({ ...l, pod: p.name })));
      if (listeners.length) this.servers.push(await startServer(ns, nodeName, listeners));
    }
  }

  get node(): Netns {
    return this.topology!.node;
  }

  snapshot(file: string): Snapshot {
    const s = this.snapshots.find((x) => x.file === file);
    if (!s) throw new Error(`${file} is not one of this cluster's snapshots`);
    return s;
  }

  /** Compiles `file` and loads it into the node with the backend (nftables: a full replace, in `layout`). */
  async load(file: string, layout?: NftLayout): Promise<void> {
    await this.backend.load(file, this.topology!, layout);
    this.current = this.snapshot(file);
  }

  /**
   * `nft -j list ruleset | kproxc diff FILE --live - | nft -f -` on the node (docs/cli.md's
   * contract). Returns the script it applied, so a caller can check how small it was.
   */
  async diff(file: string, kind: NftLayout = TABLE_KINDS[0]): Promise<string> {
    const live = this.node.nft(['-j', 'list', 'ruleset']);
    const r = await kproxc(['diff', ...kindArgs(kind), file, '--live', '-'], live);
    if (r.code !== 0) throw new Error(`kproxc diff ${file} --live - exited ${r.code}: ${r.stderr.trim()}`);
    this.node.nft(['-f', '-'], r.stdout);
    this.current = this.snapshot(file);
    return r.stdout;
  }

  /**
   * Runs probe jobs from a pod on the node or from the off-cluster client. Every UDP
   * exchange of the cluster's life gets a source port of its own, below the kernel's
   * ephemeral range: a UDP conntrack entry outlives a ruleset change (kube-proxy deletes
   * stale ones with the conntrack tool, which the suite does not have), and a later probe
   * that happened to reuse its ports would follow the old entry, not the new rules.
   */
  probe(from: Origin, jobs: ProbeJob[]): Promise<ProbeResult[][]> {
    const t = this.topology!;
    const ns = from === EXTERNAL ? t.external : t.pods.get(from);
    if (!ns) throw new Error(`no namespace for ${from}`);
    const numbered = jobs.map((j) => {
      if (j.proto !== 'udp' || j.sourcePort !== undefined) return j;
      const sourcePort = this.nextUdpPort;
      this.nextUdpPort += j.count;
      if (this.nextUdpPort > UDP_PORT_LAST) throw new Error('the cluster ran out of UDP source ports: probe less');
      return { ...j, sourcePort };
    });
    return probe(ns, numbered);
  }

  /**
   * Stops every server by pid, then what the backend started, then removes every namespace
   * (and with them every link).
   */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const errors: unknown[] = [];
    for (const s of this.servers.splice(0)) await s.stop().catch((e) => errors.push(e));
    this.removeNamespaces();
    process.removeListener('exit', this.removeNamespaces);
    if (errors.length) throw new AggregateError(errors, 'stopping the echo servers');
  }

  /** Synchronous, for the exit hook: the echo servers exit when their standard input closes. */
  private readonly removeNamespaces = (): void => {
    try {
      this.backend.teardown();
    } finally {
      for (const ns of this.namespaces.splice(0).reverse()) ns.destroy();
    }
  };
}

