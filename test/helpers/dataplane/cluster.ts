// A namespace cluster for one suite: the topology of plan.ts built by topology.ts, an echo
// server in every namespace that holds endpoints, and the node's ruleset loaded with the
// real `kproxc` CLI and the real `nft`. Everything it creates is destroyed by destroy(),
// which the suite calls in afterAll and which is safe to call twice or after a failed build.
import { kproxc } from '../kproxc.js';
import type { Netns } from '../netns.js';
import { type HarnessConfig, planTopology, type TopologyPlan } from './plan.js';
import { probe, type ProbeJob, type ProbeResult, type Server, startServer } from './processes.js';
import { readSnapshot, type Snapshot } from './snapshot.js';
import { buildTopology, type Topology } from './topology.js';

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
  clients: [
    { name: 'client-a', addrs: ['10.244.1.100', 'fd00:244:1::100'] },
    { name: 'client-b', addrs: ['10.244.1.101', 'fd00:244:1::101'] },
  ],
};

/** Where a probe runs: a pod on the node (local endpoint or client), or the off-cluster client. */
export type Origin = string;
export const EXTERNAL: Origin = 'external';

export class Cluster {
  readonly namespaces: Netns[] = [];
  readonly servers: Server[] = [];
  topology?: Topology;
  /** The snapshot whose ruleset the node holds now. */
  current?: Snapshot;
  private destroyed = false;

  private constructor(
    readonly snapshots: Snapshot[],
    readonly plan: TopologyPlan,
  ) {}

  /**
   * Builds the namespaces for every pod any of the snapshots names (so that a later snapshot
   * finds its pods already there) and starts their servers. Loads no ruleset.
   */
  static async create(files: string[], config: HarnessConfig = DEFAULT_CONFIG): Promise<Cluster> {
    const snapshots = files.map(readSnapshot);
    const cluster = new Cluster(snapshots, planTopology(snapshots, config));
    try {
      cluster.topology = buildTopology(cluster.plan, (ns) => cluster.namespaces.push(ns));
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

  /** `kproxc compile FILE | nft -f -` on the node: a full, atomic replace of its tables. */
  async load(file: string): Promise<void> {
    const r = await kproxc(['compile', file]);
    if (r.code !== 0) throw new Error(`kproxc compile ${file} exited ${r.code}: ${r.stderr}`);
    this.node.nft(['-f', '-'], r.stdout);
    this.current = this.snapshot(file);
  }

  /**
   * `nft -j list ruleset | kproxc diff FILE --live - | nft -f -` on the node (cli.md's
   * contract). Returns the script it applied, so a caller can check how small it was.
   */
  async diff(file: string): Promise<string> {
    const live = this.node.nft(['-j', 'list', 'ruleset']);
    const r = await kproxc(['diff', file, '--live', '-'], live);
    if (r.code !== 0) throw new Error(`kproxc diff ${file} --live - exited ${r.code}: ${r.stderr.trim()}`);
    this.node.nft(['-f', '-'], r.stdout);
    this.current = this.snapshot(file);
    return r.stdout;
  }

  /** Runs probe jobs from a pod on the node or from the off-cluster client. */
  probe(from: Origin, jobs: ProbeJob[]): Promise<ProbeResult[][]> {
    const t = this.topology!;
    const ns = from === EXTERNAL ? t.external : t.pods.get(from);
    if (!ns) throw new Error(`no namespace for ${from}`);
    return probe(ns, jobs);
  }

  /** Stops every server by pid, then removes every namespace (and with them every link). */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const errors: unknown[] = [];
    for (const s of this.servers.splice(0)) await s.stop().catch((e) => errors.push(e));
    for (const ns of this.namespaces.splice(0).reverse()) ns.destroy();
    if (errors.length) throw new AggregateError(errors, 'stopping the echo servers');
  }
}

