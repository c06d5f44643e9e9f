// The data-plane scenarios, each a function of the cluster and the snapshot its node holds.
// A scenario names the Services it exercises; everything it expects (which endpoints may
// answer, which are local, which ports have none, which sources a range admits) is read
// from the snapshot by snapshot.ts, never from kproxc's model or rules. The same list runs
// after `kproxc compile` of each snapshot and after `kproxc diff` from one to the next.
import { expect } from 'vitest';
import { type Cluster, EXTERNAL } from './cluster.js';
import { type Answer, answered, answeredBy, enoughToSeeAll, failedWith, masqueraded, sourceKept } from './expect.js';
import { ofFamily, type PodPlan } from './plan.js';
import type { ProbeJob } from './processes.js';
import {
  clusterIP,
  type Family,
  familyOf,
  inSourceRanges,
  nodeIP,
  port,
  readyEndpoints,
  service,
  type Snapshot,
  type SnapPort,
  type SnapService,
} from './snapshot.js';

export const WEB = 'shop/web';
export const STICKY = 'shop/web-sticky';
const STOREFRONT = 'shop/storefront';
const LEGACY = 'shop/legacy';
const DNS = 'kube-system/kube-dns';

/** Per attempt, when an answer is expected: generous, since it bounds only failures. */
const ANSWER_MS = 1500;
/** Per attempt, when a drop is expected: every such attempt costs this much. */
const DROP_MS = 800;
/**
 * A refusal (TCP reset or ICMP unreachable) arrives in well under a second; now and then
 * (twice in some twenty full runs of the suites) the first SYN goes unanswered and TCP's
 * retransmission a second later is refused. Within this bound a refusal is still told from
 * a drop: a dropped SYN ends in a timeout (ETIMEDOUT at the probe's 2000 ms), never in
 * ECONNREFUSED.
 */
const REFUSED_WITHIN_MS = 1500;

/** A scenario runs against a cluster of the backend it was written for (any, by default). */
export interface Scenario<C extends Cluster = Cluster> {
  name: string;
  run(c: C, snap: Snapshot): Promise<void>;
}

function tcp(host: string, p: number, count: number, from?: string): ProbeJob {
  return { proto: 'tcp', host, port: p, count, timeoutMs: ANSWER_MS, from };
}

export function job(sp: SnapPort, host: string, p: number, count: number, from?: string): ProbeJob {
  return { ...tcp(host, p, count, from), proto: sp.proto };
}

/** A Service port of the snapshot and its ready endpoints of a family (local ones only with localOnly). */
function target(snap: Snapshot, key: string, portName: string, family: Family = 4, localOnly = false) {
  const svc = service(snap, key);
  return { svc, sp: port(svc, portName), eps: readyEndpoints(snap, key, portName, family, localOnly) };
}

export function client(c: Cluster, i = 0): PodPlan {
  return c.plan.clients[i];
}

function addrOf(pod: PodPlan, family: Family): string {
  const a = ofFamily(pod.addrs, family)[0];
  if (!a) throw new Error(`${pod.name} has no IPv${family} address`);
  return a;
}

/** The addresses a masqueraded packet may carry: the node's LAN and pod-gateway addresses. */
function nodeAddrs(c: Cluster): string[] {
  return [...c.plan.node.lanAddrs, ...c.plan.node.gateways];
}

/** The off-cluster client's address on the LAN, for the family. */
export function routerAddr(c: Cluster, family: Family): string {
  return ofFamily(c.plan.config.router, family)[0];
}

function nodePortOf(svc: SnapService, sp: SnapPort): number {
  if (!sp.nodePort) throw new Error(`${svc.key} port ${sp.name} has no nodePort`);
  return sp.nodePort;
}

async function one(c: Cluster, from: string, j: ProbeJob) {
  return (await c.probe(from, [j]))[0];
}

/** Every pod answers on its own address: the harness check that makes "never answers" mean something. */
const podsAnswerDirectly: Scenario = {
  name: 'every pod of the topology answers on its own address (harness check)',
  async run(c) {
    const pods = [...c.plan.localPods, ...c.plan.remotePods];
    const jobs = pods.flatMap((p) => p.listeners.map((l) => ({ ...tcp(l.addr, l.port, 1), proto: l.proto })));
    const results = await c.probe(client(c).name, jobs);
    let i = 0;
    for (const p of pods) {
      for (const l of p.listeners) {
        const [a] = answered(results[i++], `${l.proto} ${l.addr}:${l.port} directly`);
        expect(a.pod, `${l.addr}:${l.port} is ${p.name}`).toBe(p.name);
      }
    }
  },
};

/** web's ClusterIP of one family from a client pod: every ready endpoint of that family, source kept. */
export function clusterIPSpread(family: Family): Scenario {
  const v = family === 6 ? 'IPv6 ' : '';
  return {
    name: `${v}ClusterIP spreads over every ready ${v}endpoint and keeps the pod source`,
    async run(c, snap) {
      const { svc, sp, eps } = target(snap, WEB, 'http', family);
      expect(eps.length, `web has several ${v}endpoints to spread over`).toBeGreaterThan(1);
      const r = await one(c, client(c).name, job(sp, clusterIP(svc, family), sp.port, enoughToSeeAll(eps.length)));
      sourceKept(answeredBy(r, eps, `${WEB} ${v}ClusterIP`), addrOf(client(c), family), `${WEB} ${v}ClusterIP`);
    },
  };
}

/**
 * Which source address endpoints see for traffic from outside: `masqueraded`, a node
 * address (kube-proxy's rules), or `kept`, the client's own (the ovs backend's pipeline).
 */
export type OutsideSource = 'masqueraded' | 'kept';

const sourceWords = (source: OutsideSource) => (source === 'kept' ? 'keeping the client source' : 'masqueraded');

function sourceIs(source: OutsideSource, c: Cluster, answers: Answer[], client: string, what: string): void {
  if (source === 'kept') sourceKept(answers, client, what);
  else masqueraded(answers, nodeAddrs(c), what);
}

/** How the off-cluster client reaches a NodePort, and which source its endpoints see. */
export interface NodePortVia {
  /** The address it connects to (default: the snapshot's node IP of the family) and its name. */
  address?: { of(family: Family): string; label: string };
  source: OutsideSource;
}

/** web's NodePort of one family from outside: every endpoint of that family, with the source `via` says. */
export function nodePortFromOutside(family: Family, via: NodePortVia = { source: 'masqueraded' }): Scenario {
  const v = family === 6 ? 'IPv6 ' : '';
  const on = via.address ? ` on ${via.address.label}` : '';
  return {
    name: `${v}NodePort${on} from outside the cluster reaches every ${v}endpoint, ${sourceWords(via.source)}`,
    async run(c, snap) {
      const { svc, sp, eps } = target(snap, WEB, 'http', family);
      const host = via.address?.of(family) ?? nodeIP(snap, family);
      const src = routerAddr(c, family);
      const what = `${WEB} ${v}NodePort${on}`;
      const answers = answeredBy(await one(c, EXTERNAL, job(sp, host, nodePortOf(svc, sp), enoughToSeeAll(eps.length), src)), eps, what);
      sourceIs(via.source, c, answers, src, what);
    },
  };
}

export function externalIPFromOutside(source: OutsideSource = 'masqueraded'): Scenario {
  return {
    name: `external IP from outside the cluster reaches the endpoints, ${sourceWords(source)}`,
    async run(c, snap) {
      const { svc, sp, eps } = target(snap, LEGACY, 'https');
      expect(svc.externalIPs.length, `${LEGACY} has an external IP`).toBeGreaterThan(0);
      const src = routerAddr(c, 4);
      const r = await one(c, EXTERNAL, job(sp, svc.externalIPs[0], sp.port, enoughToSeeAll(eps.length), src));
      sourceIs(source, c, answeredBy(r, eps, `${LEGACY} external IP`), src, `${LEGACY} external IP`);
    },
  };
}

export const lbSourceRanges: Scenario = {
  name: 'load-balancer IP admits sources inside loadBalancerSourceRanges and drops the others',
  async run(c, snap) {
    const svc = service(snap, STOREFRONT);
    const sp = port(svc, 'https');
    const lb = svc.lbIPs[0];
    expect(lb, `${STOREFRONT} has a load-balancer IP`).toBeDefined();
    const inside = c.plan.config.outsideSources.find((a) => inSourceRanges(svc, a));
    const outside = c.plan.config.outsideSources.find((a) => !inSourceRanges(svc, a));
    expect([inside, outside], 'the off-cluster client has a source inside and one outside the ranges').not.toContain(undefined);
    const eps = readyEndpoints(snap, STOREFRONT, 'https', 4, svc.externalLocal);
    const [admitted, dropped] = await c.probe(EXTERNAL, [
      job(sp, lb, sp.port, enoughToSeeAll(eps.length), inside),
      { ...job(sp, lb, sp.port, 3, outside), timeoutMs: DROP_MS, parallel: true },
    ]);
    answeredBy(admitted, eps, `${STOREFRONT} LB IP from ${inside}`);
    failedWith(dropped, 'ETIMEDOUT', `${STOREFRONT} LB IP from ${outside}`);
  },
};

export const externalLocal: Scenario = {
  name: 'externalTrafficPolicy Local keeps the client source and reaches only local endpoints',
  async run(c, snap) {
    const svc = service(snap, STOREFRONT);
    const sp = port(svc, 'https');
    expect(svc.externalLocal, `${STOREFRONT} has externalTrafficPolicy Local`).toBe(true);
    const local = readyEndpoints(snap, STOREFRONT, 'https', 4, true);
    const all = readyEndpoints(snap, STOREFRONT, 'https', 4);
    expect(local.length, 'a local endpoint to reach').toBeGreaterThan(0);
    expect(all.length, 'and another node holds endpoints to avoid').toBeGreaterThan(local.length);
    // Enough that a policy of Cluster would almost surely have reached a remote endpoint.
    const n = Math.max(20, enoughToSeeAll(all.length));
    const inside = c.plan.config.outsideSources.find((a) => inSourceRanges(svc, a))!;
    const src = routerAddr(c, 4);
    const [viaNodePort, viaLB] = await c.probe(EXTERNAL, [job(sp, nodeIP(snap, 4), nodePortOf(svc, sp), n, src), job(sp, svc.lbIPs[0], sp.port, n, inside)]);
    sourceKept(answeredBy(viaNodePort, local, `${STOREFRONT} NodePort`), src, `${STOREFRONT} NodePort`);
    sourceKept(answeredBy(viaLB, local, `${STOREFRONT} LB IP`), inside, `${STOREFRONT} LB IP`);
  },
};

/** Every (Service, port, family) of the snapshot that has a cluster IP but no ready endpoint. */
function portsWithoutEndpoints(snap: Snapshot): { svc: SnapService; sp: SnapPort; family: Family }[] {
  const out: { svc: SnapService; sp: SnapPort; family: Family }[] = [];
  for (const svc of snap.services) {
    for (const ip of svc.clusterIPs) {
      for (const sp of svc.ports) {
        if (readyEndpoints(snap, svc.key, sp.name, familyOf(ip)).length === 0) out.push({ svc, sp, family: familyOf(ip) });
      }
    }
  }
  return out;
}

/**
 * Probe jobs, shaped by `shape`, at every Service port of the snapshot without a ready
 * endpoint: its ClusterIP (`inner`, for a pod) and its NodePort on the node IP (`outer`,
 * from outside). Fails unless there is at least one.
 */
export function jobsWithoutEndpoints(snap: Snapshot, shape: (j: ProbeJob) => ProbeJob): { inner: ProbeJob[]; outer: ProbeJob[] } {
  const empty = portsWithoutEndpoints(snap);
  expect(empty.length, 'the snapshot has a Service port without endpoints').toBeGreaterThan(0);
  return {
    inner: empty.map((e) => shape(job(e.sp, clusterIP(e.svc, e.family), e.sp.port, 0))),
    outer: empty.filter((e) => e.sp.nodePort).map((e) => shape(job(e.sp, nodeIP(snap, e.family), e.sp.nodePort!, 0))),
  };
}

const noEndpoints: Scenario = {
  name: 'a Service without endpoints refuses connections at once instead of hanging',
  async run(c, snap) {
    const refused = (j: ProbeJob): ProbeJob => ({ ...j, count: 2, timeoutMs: 2000, stopAfterFailures: 2 });
    const { inner, outer } = jobsWithoutEndpoints(snap, refused);
    const [fromPod, fromOutside] = await Promise.all([c.probe(client(c).name, inner), c.probe(EXTERNAL, outer)]);
    inner.forEach((j, i) => failedWith(fromPod[i], 'ECONNREFUSED', `${j.proto} ClusterIP ${j.host}:${j.port}`, REFUSED_WITHIN_MS));
    outer.forEach((j, i) => failedWith(fromOutside[i], 'ECONNREFUSED', `${j.proto} NodePort ${j.host}:${j.port}`, REFUSED_WITHIN_MS));
  },
};

const udp: Scenario = {
  name: 'UDP: ClusterIP and NodePort answer from the Service address',
  async run(c, snap) {
    const dns = service(snap, DNS);
    const sp = port(dns, 'dns');
    expect(sp.proto).toBe('udp');
    const eps = readyEndpoints(snap, DNS, 'dns', 4);
    const ip = clusterIP(dns, 4);
    // UDP NodePorts with endpoints, whichever Services have them in this snapshot.
    const nodePorts = snap.services.flatMap((svc) =>
      svc.ports.filter((p) => p.proto === 'udp' && p.nodePort && readyEndpoints(snap, svc.key, p.name, 4).length).map((p) => ({ svc, p })),
    );
    expect(nodePorts.length, 'the snapshot has a UDP NodePort with endpoints').toBeGreaterThan(0);
    const node = nodeIP(snap, 4);
    const [[inner], outer] = await Promise.all([
      c.probe(client(c).name, [job(sp, ip, sp.port, enoughToSeeAll(eps.length))]),
      c.probe(EXTERNAL, nodePorts.map(({ svc, p }) => job(p, node, p.nodePort!, enoughToSeeAll(readyEndpoints(snap, svc.key, p.name, 4).length)))),
    ]);
    const answers = answeredBy(inner, eps, `${DNS} UDP ClusterIP`);
    sourceKept(answers, addrOf(client(c), 4), `${DNS} UDP ClusterIP`);
    expect(new Set(answers.map((a) => a.replyFrom)), 'replies come from the ClusterIP').toEqual(new Set([ip]));
    nodePorts.forEach(({ svc, p }, i) => {
      const what = `${svc.key} UDP NodePort ${p.nodePort}`;
      const a = answeredBy(outer[i], readyEndpoints(snap, svc.key, p.name, 4), what);
      masqueraded(a, nodeAddrs(c), what);
      expect(new Set(a.map((x) => x.replyFrom)), `${what}: replies come from the node IP`).toEqual(new Set([node]));
    });
  },
};

/** Connections per source for affinity: without it, one of k endpoints would answer them all with k^-(n-1). */
const AFFINITY_CONNECTIONS = 15;

/**
 * Which endpoint of web-sticky each IPv4 source of the client pods sticks to, by source
 * address; fails unless each sticks to exactly one.
 */
export async function stickyEndpoints(c: Cluster, snap: Snapshot): Promise<Map<string, string>> {
  const svc = service(snap, STICKY);
  const sp = port(svc, 'http');
  expect(svc.clientIPAffinity, `${STICKY} has sessionAffinity ClientIP`).toBe(true);
  const eps = readyEndpoints(snap, STICKY, 'http', 4);
  expect(eps.length, 'several endpoints to choose from').toBeGreaterThan(1);
  const out = new Map<string, string>();
  await Promise.all(
    c.plan.clients.map(async (cl) => {
      const sources = ofFamily(cl.addrs, 4);
      const runs = await c.probe(
        cl.name,
        sources.map((src) => job(sp, clusterIP(svc, 4), sp.port, AFFINITY_CONNECTIONS, src)),
      );
      sources.forEach((src, i) => {
        const answers = answeredBy(runs[i], eps, `${STICKY} from ${src}`, false);
        sourceKept(answers, src, `${STICKY} from ${src}`);
        const chosen = [...new Set(answers.map((a) => a.addr))];
        expect(chosen, `${src} stays on one endpoint of ${STICKY}`).toHaveLength(1);
        out.set(src, chosen[0]);
      });
    }),
  );
  return out;
}

const affinity: Scenario = {
  name: 'ClientIP affinity keeps each client on one endpoint across connections',
  async run(c, snap) {
    await stickyEndpoints(c, snap);
  },
};

const hairpin: Scenario = {
  name: 'hairpin: an endpoint reaches its own Service, and itself masqueraded',
  async run(c, snap) {
    const { svc, sp, eps } = target(snap, WEB, 'http');
    const self = readyEndpoints(snap, WEB, 'http', 4, true)[0];
    expect(self, `${WEB} has a local endpoint`).toBeDefined();
    const r = await one(c, self.pod, job(sp, clusterIP(svc, 4), sp.port, enoughToSeeAll(eps.length)));
    const answers = answeredBy(r, eps, `${WEB} ClusterIP from its endpoint ${self.pod}`);
    // To itself the packet would carry its own address as source and be dropped as a
    // martian, so the node must masquerade it; to the others it keeps its source.
    masqueraded(
      answers.filter((a) => a.addr === self.addr),
      nodeAddrs(c),
      `${self.pod} reaching itself`,
    );
    sourceKept(
      answers.filter((a) => a.addr !== self.addr),
      self.addr,
      `${self.pod} reaching the others`,
    );
  },
};

export const HARNESS_CHECK = podsAnswerDirectly;

export const SCENARIOS: Scenario[] = [
  clusterIPSpread(4),
  nodePortFromOutside(4),
  externalIPFromOutside(),
  lbSourceRanges,
  externalLocal,
  noEndpoints,
  udp,
  affinity,
  hairpin,
  clusterIPSpread(6),
  nodePortFromOutside(6),
];
