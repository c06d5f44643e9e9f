// The ovs and nftables tracers on the same snapshots and packets: where Antrea's Service
// pipeline and kube-proxy mean the same (ClusterIP, NodePort, external IP, load-balancer IP,
// source ranges, traffic policies, terminating endpoints, no endpoints, a ClusterIP's unused
// port, an unallocated ServiceCIDR address: nft's reject and the ovs packet-in both count as
// reject), the verdict and endpoint set must be equal. Every
// disagreement must be one of the differences docs/trace.md documents, checked against the
// model here, and each of them must show up, so the documentation stays true:
//
// - local-traffic: kube-proxy sends "local" sources (its local-traffic detector, or a node
//   address) to all endpoints of an externalTrafficPolicy: Local Service's external
//   addresses; the ovs pipeline short-circuits only this node's Pod CIDR.
// - local-policy: a Local policy with no local endpoint (but some elsewhere) is a drop in
//   kube-proxy and a reject (packet-in) in Antrea.
//
// kube-proxy masquerades far more than the ovs pipeline SNATs (which only hairpins), so
// masquerade is checked one way: a branch the ovs pipeline SNATs is masqueraded by nft.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/compile.js';
import { categorizeEndpoints } from '../../src/model/categorize.js';
import { servicePortKey, type Endpoint, type FamilyModel, type ServicePort } from '../../src/model/types.js';
import { cidrContains, ipEquals, isLoopback, type IP } from '../../src/net/ip.js';
import type { PreparedTracer } from '../../src/trace/backend.js';
import type { TracePacket } from '../../src/trace/packet.js';
import { summarize, type Summary, type TraceResult } from '../../src/trace/result.js';
import { fixtureArgs } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/kproxc.js';
import { parseArgsToOptions } from '../helpers/options.js';
import { LAB } from '../helpers/packet-lab.js';
import { randomCluster } from '../helpers/random-cluster.js';
import { flowDir, packetOf, readFlows, tracerFor } from '../helpers/trace.js';

type Why = 'local-traffic' | 'local-policy';

interface Owner {
  sp: ServicePort;
  external: boolean;
}

/** The Service port a packet is addressed to, as both data planes see it for known node addresses. */
function ownerOf(m: FamilyModel, p: TracePacket): Owner | undefined {
  const proto = (sp: ServicePort) => sp.id.protocol.toLowerCase() === p.protocol;
  const isNode = m.nodeIPs.some((a) => ipEquals(a, p.dst));
  for (const sp of m.servicePorts.filter(proto)) {
    if (ipEquals(sp.clusterIP, p.dst) && sp.port === p.dport) return { sp, external: false };
    if (sp.nodePort !== 0 && sp.nodePort === p.dport && isNode) return { sp, external: true };
    if ([...sp.externalIPs, ...sp.loadBalancerVIPs].some((ip) => ipEquals(ip, p.dst)) && sp.port === p.dport) return { sp, external: true };
  }
  return undefined;
}

function served(eps: Endpoint[]): Pick<Summary, 'verdict' | 'endpoints'> {
  return eps.length ? { verdict: 'dnat', endpoints: eps.map((e) => e.key).sort() } : { verdict: 'reject', endpoints: [] };
}

const brief = (s: Summary) => ({ verdict: s.verdict, endpoints: [...s.endpoints].sort() });

/** Which documented difference explains a disagreement, checked against the model; undefined if none does. */
function explain(m: FamilyModel, p: TracePacket, nft: Summary, ovs: Summary): Why | undefined {
  const owner = ownerOf(m, p);
  if (!owner) return undefined;
  const { sp, external } = owner;
  const cat = categorizeEndpoints(m.endpoints.get(servicePortKey(sp.id)) ?? [], sp, m.nodeName, m.nodeLabels);
  const local = external ? sp.externalPolicyLocal : sp.internalPolicyLocal;
  if (local && cat.localEndpoints.length === 0 && nft.verdict === 'drop' && ovs.verdict === 'reject') return 'local-policy';
  if (external && sp.externalPolicyLocal) {
    const d = m.localDetector;
    const byDetector = d.mode === 'cidr' && cidrContains(d.cidr, p.src);
    const kubeProxyLocal = byDetector || isLoopback(p.src) || m.nodeIPs.some((a) => ipEquals(a, p.src));
    const ovsLocal = m.podCIDRs.some((c) => cidrContains(c, p.src));
    const expect = (isLocal: boolean) => JSON.stringify(served(isLocal ? cat.clusterEndpoints : cat.localEndpoints));
    if (kubeProxyLocal !== ovsLocal && JSON.stringify(brief(nft)) === expect(kubeProxyLocal) && JSON.stringify(brief(ovs)) === expect(ovsLocal)) return 'local-traffic';
  }
  return undefined;
}

interface Tally {
  agreed: number;
  why: Record<Why, number>;
  unexplained: string[];
  snatChecked: number;
}

const tally: Tally = { agreed: 0, why: { 'local-traffic': 0, 'local-policy': 0 }, unexplained: [], snatChecked: 0 };

function endpointMasq(r: TraceResult): Map<string, boolean> {
  return new Map(r.branches.filter((b) => b.endpoint).map((b) => [b.endpoint!, b.masquerade]));
}

function compare(m: FamilyModel, nftTracer: PreparedTracer, ovsTracer: PreparedTracer, p: TracePacket, label: string): void {
  const nftResult = nftTracer.trace(p);
  const ovsResult = ovsTracer.trace(p);
  const nft = summarize(nftResult);
  const ovs = summarize(ovsResult);
  if (JSON.stringify(brief(nft)) === JSON.stringify(brief(ovs))) tally.agreed++;
  else {
    const why = explain(m, p, nft, ovs);
    if (why) tally.why[why]++;
    else tally.unexplained.push(`${label}: nft ${JSON.stringify(brief(nft))}, ovs ${JSON.stringify(brief(ovs))}`);
  }
  const nftMasq = endpointMasq(nftResult);
  for (const [ep, snat] of endpointMasq(ovsResult)) {
    if (!snat) continue;
    tally.snatChecked++;
    expect(nftMasq.get(ep), `${label}: the ovs pipeline SNATs the way to ${ep}, nft must masquerade it`).toBe(true);
  }
}

function modelFor(file: string, args: string[]): FamilyModel[] {
  const text = fs.readFileSync(file, 'utf8');
  return loadModel([{ name: file, text }], parseArgsToOptions([...fixtureArgs(text), ...args])).families;
}

const familyOf = (families: FamilyModel[], ip: IP) => families.find((f) => f.family === ip.family)!;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-ovsnft-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the ovs and nftables tracers agree where the data planes mean the same', () => {
  const dir = flowDir(ROOT);
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    it(`kube-proxy's packet flows: ${f}`, () => {
      for (const c of readFlows(path.join(dir, f)).cases) {
        const file = path.join(dir, c.snapshot);
        const families = modelFor(file, c.args ?? []);
        const nft = tracerFor(file, c.args ?? []);
        const ovs = tracerFor(file, c.args ?? [], 'ovs');
        for (const fp of c.packets) {
          const p = packetOf(fp);
          compare(familyOf(families, p.src), nft, ovs, p, `${c.snapshot} ${fp.name}`);
        }
      }
    });
  }

  // Random clusters with this node's Pod CIDR as kube-proxy's local-traffic detector, so that
  // both data planes tell local Pods the same way.
  for (const seed of [3, 5, 8, 13, 21, 34]) {
    it(`random cluster, seed ${seed}, Pods detected by the node's Pod CIDR`, () => {
      const c = randomCluster(seed, 5);
      const file = path.join(tmp, `random-${seed}.yaml`);
      fs.writeFileSync(file, c.yaml.replace('metadata: {name: test-node}\n', 'metadata: {name: test-node}\nspec: {podCIDR: 10.0.0.0/24}\n'));
      const args = ['--detect-local-mode', 'NodeCIDR'];
      const [m] = modelFor(file, args);
      const nft = tracerFor(file, args);
      const ovs = tracerFor(file, args, 'ovs');
      const sources = [LAB.clientExternal, LAB.clientBlocked, LAB.clientPod, LAB.nodeIPs[0]];
      for (const t of c.targets) {
        for (const src of sources) compare(m, nft, ovs, packetOf({ sourceIP: src, destIP: t.dst, destPort: t.port }), `seed ${seed} ${src} -> ${t.dst}:${t.port}`);
      }
      // Every local endpoint reaching itself through its ClusterIP: both SNAT/masquerade that branch.
      for (const sp of m.servicePorts) {
        for (const e of (m.endpoints.get(servicePortKey(sp.id)) ?? []).filter((x) => x.isLocal)) {
          const p: TracePacket = { protocol: 'tcp', src: e.ip, dst: sp.clusterIP, sport: 40000, dport: sp.port };
          compare(m, nft, ovs, p, `seed ${seed} hairpin ${e.key}`);
        }
      }
    });
  }

  it('every disagreement is a documented difference, and each documented difference occurs', () => {
    expect(tally.unexplained).toEqual([]);
    expect(tally.agreed).toBeGreaterThan(300);
    for (const why of Object.keys(tally.why) as Why[]) expect(tally.why[why], why).toBeGreaterThan(0);
    expect(tally.snatChecked).toBeGreaterThan(3);
  });
});
