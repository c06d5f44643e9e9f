// The fast-load layout against kube-proxy's, compiled from the same cluster: the same
// chains in the same order but the endpoint chains and the chains of Service ports that
// share fast-load's DNAT chains, every rule the same but the endpoint choice, the affinity
// state and the source ranges, and those choosing the same endpoints with the same
// probabilities, in the same order, and checking the same ranges.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterObjects, makeCluster, renderSnapshot } from '../../../scripts/gen-snapshot.mjs';
import { endpointMapSlot } from '../../../src/backends/nftables/fast-load/endpoint-map.js';
import { claimRange } from '../../../src/backends/nftables/fast-load/key-ranges.js';
import type { Endpoint } from '../../../src/model/types.js';
import { statementsBuilder } from '../../../src/nft/ruleset.js';
import { uniformChoice } from '../../../src/backends/nftables/fast-load/selection.js';
import {
  clusterIPDraws,
  compared,
  expectChainRules,
  expectDispatch,
  expectNoAnonymousSets,
  expectSameChains,
  expectSameOutsideChains,
  expectServicesChain,
  expectSharedChainRules,
  inlinedPolicies,
  expectAffinityRecords,
  sharedFirewallChains,
  withAffinity,
} from '../../helpers/fast-load-vs-kube-proxy.js';
import { kproxc } from '../../helpers/kproxc.js';
import { flatElements } from '../../helpers/nested-text.js';

/**
 * The probability with which a run of fast-load's uniform-choice rules takes each action:
 * `numgen random mod K 0 ACTION` (a new draw each), the last one `ACTION` alone.
 */
function choiceOdds(rules: string[]): Map<string, number> {
  const odds = new Map<string, number>();
  let reach = 1;
  for (const r of rules) {
    const m = /^numgen random mod (\d+) 0 (.+)$/.exec(r);
    const action = m ? m[2] : r;
    const p = m ? reach / Number(m[1]) : reach;
    odds.set(action, (odds.get(action) ?? 0) + p);
    reach -= p;
  }
  expect(reach).toBeCloseTo(0, 12);
  return odds;
}

async function compile(yaml: string, layout: string, format = 'text', version = '1.35'): Promise<string> {
  const r = await kproxc(['compile', '--layout', layout, '--format', format, '--kube-proxy-version', version, '-'], yaml);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  // fast-load's text adds each set's elements in one command: read here one per line.
  return layout === 'fast-load' && format === 'text' ? flatElements(r.stdout) : r.stdout;
}

describe('fast-load endpoint choice', () => {
  it('gives every endpoint 1/N, for N = 1..20', () => {
    for (let n = 1; n <= 20; n++) {
      const targets = Array.from({ length: n }, (_, i) => `e${i}`);
      const rules = uniformChoice(targets);
      expect(rules).toHaveLength(n);
      const text = rules.map((stmts) =>
        stmts.map((s) => (s.t === 'match' && s.left.t === 'numgen' ? `numgen random mod ${s.left.mod} 0` : s.t === 'verdict' && 'target' in s.v ? `goto ${s.v.target}` : '?')).join(' '),
      );
      const odds = choiceOdds(text);
      expect([...odds.keys()]).toEqual(targets.map((t) => `goto ${t}`));
      for (const p of odds.values()) expect(p).toBeCloseTo(1 / n, 12);
    }
  });
});

describe('compile --layout fast-load', () => {
  const yamlOf = (endpoints: number) => renderSnapshot(clusterObjects(makeCluster(200, { endpoints, mixed: true })), 'yaml');
  const yaml = yamlOf(10);

  // With 10 endpoints a Service every port keeps its own chains; with 2 the ports with few
  // destinations share the DNAT chains (shared-dnat.ts), the others keep theirs.
  it.each([10, 2])('keeps every chain and rule of kube-proxy 1.36 but the endpoint choice, the affinity state and the source ranges (%i endpoints a Service)', async (endpoints) => {
    const snapshot = yamlOf(endpoints);
    // fast-load's text is kube-proxy 1.36's table (hairpin set, inline mark) with endpoint maps.
    const c = compared(await compile(snapshot, 'kube-proxy', 'text', '1.36'), await compile(snapshot, 'fast-load', 'text', '1.36'));
    expectSameOutsideChains(c);
    expectServicesChain(c);
    const inlined = inlinedPolicies(c);
    // With 2 endpoints every Local-policy port's external chain is shared.
    if (endpoints === 10) expect(inlined.size).toBeGreaterThan(10);
    const draws = clusterIPDraws(c);
    const dispatch = expectDispatch(c, draws);
    expect(dispatch.markedSeen).toBeGreaterThan(endpoints === 10 ? 40 : 10);
    const sharedChains = expectSharedChainRules(c);
    if (endpoints === 10) expect([dispatch.replaced.size, dispatch.clusterIPsDrawn]).toEqual([0, 0]);
    else {
      expect(dispatch.replaced.size).toBeGreaterThan(100);
      expect(dispatch.clusterIPsDrawn).toBeGreaterThan(50);
      expect(sharedChains.length).toBeGreaterThan(0);
      expect(draws.size).toBeGreaterThan(0);
      // With 10 endpoints no Local-policy port shares; with 2 they do.
      expect(dispatch.localShared.size).toBeGreaterThan(0);
    }
    // kube-proxy's endpoint chains are the Services' with affinity; fast-load has none.
    const endpointChains = [...c.a.keys()].filter((n) => n.startsWith('endpoint-'));
    expect(endpointChains.length).toBeGreaterThan(40);
    expect(endpointChains.filter((n) => withAffinity(c, n)).length).toBeGreaterThan(40);
    expect([...c.b.keys()].filter((n) => n.startsWith('endpoint-'))).toEqual([]);
    const otherForms = { ...dispatch, inlined };
    expectSameChains(c, otherForms);
    const counts = expectChainRules(c, otherForms, sharedFirewallChains(c));
    expect(counts.affinity).toBeGreaterThan(20);
    // The Local-policy ports with their own external chain: the cluster and the local chain
    // each draw from an endpoint map (fewer with 2 endpoints, where most share one).
    expect(counts.maps).toBeGreaterThan(endpoints === 10 ? 20 : 10);
    expect(counts.firewalls).toBe(20);
    expectNoAnonymousSets(c);
    expect(expectAffinityRecords(c)).toBeGreaterThan(endpoints === 10 ? 40 : 20);
  });

  it('keeps kube-proxy\'s per-endpoint affinity sets in JSON, which cannot declare the table-wide one', async () => {
    const kp = JSON.parse(await compile(yaml, 'kube-proxy', 'json')) as { nftables: { add?: { set?: { name: string } } }[] };
    const fl = JSON.parse(await compile(yaml, 'fast-load', 'json')) as typeof kp;
    const sets = (j: typeof kp) => j.nftables.flatMap((c) => (c.add?.set ? [c.add.set] : []));
    expect(sets(fl)).toEqual(sets(kp));
    expect(sets(fl).filter((s) => s.name.startsWith('affinity-')).length).toBeGreaterThan(100);
  });

  it('leaves kube-proxy\'s layout as the default', async () => {
    const byDefault = await kproxc(['compile', '--kube-proxy-version', '1.35', '-'], yaml);
    expect(byDefault.stdout).toBe(await compile(yaml, 'kube-proxy'));
  });

  it('refuses --layout with the ovs backend', async () => {
    const r = await kproxc(['compile', '--backend', 'ovs', '--layout', 'fast-load', '-'], yaml);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--layout does not apply to --backend ovs');
  });
});

describe('endpoint map key ranges', () => {
  const builder = () => statementsBuilder({ family: 'ip', name: 'kube-proxy' });
  // Candidate bases by probe number, as a chain's hashes would give them.
  const candidates = (...bs: number[]) => (probe: number) => bs[Math.min(probe, bs.length - 1)];

  it('gives a chain its first base when its range meets no other, in any map', () => {
    const b = builder();
    expect(claimRange(b, 'm1', 'a', 10, candidates(100))).toBe(100);
    expect(claimRange(b, 'm1', 'b', 5, candidates(110))).toBe(110);
    expect(claimRange(b, 'm2', 'c', 10, candidates(100))).toBe(100);
  });

  it('moves the later chain to its next base when the ranges overlap, however little', () => {
    const b = builder();
    expect(claimRange(b, 'm', 'a', 10, candidates(100))).toBe(100);
    expect(claimRange(b, 'm', 'b', 3, candidates(109, 500))).toBe(500);
    expect(claimRange(b, 'm', 'c', 10, candidates(91, 502, 700))).toBe(700);
    expect(claimRange(b, 'm', 'd', 1, candidates(99, 110))).toBe(99);
    expect(claimRange(b, 'm', 'e', 10, candidates(501, 710))).toBe(710);
  });

  it('finds a clash across the blocks a range spans, for ranges long and short', () => {
    const b = builder();
    expect(claimRange(b, 'm', 'a', 10, candidates(65_530))).toBe(65_530);
    expect(claimRange(b, 'm', 'b', 1, candidates(65_539, 70_000))).toBe(70_000);
    expect(claimRange(b, 'm', 'c', 200_000, candidates(0, 1_000_000))).toBe(1_000_000);
    expect(claimRange(b, 'm', 'd', 1, candidates(1_150_000, 1_200_000))).toBe(1_200_000);
    expect(claimRange(b, 'm', 'e', 1, candidates(65_529))).toBe(65_529);
  });

  it('stops with an internal error for a chain twice in a map, or with no free range', () => {
    const b = builder();
    claimRange(b, 'm', 'a', 10, candidates(100));
    expect(() => claimRange(b, 'm', 'a', 10, candidates(100))).toThrow(/twice/);
    expect(() => claimRange(b, 'm', 'z', 10, candidates(95))).toThrow(/no free key range/);
  });

  it('derives the first base from the chain name alone, below 2^31, and other bases from probes', () => {
    const onePort = [80, 80].map((port) => ({ port }) as Endpoint);
    const twoPorts = [80, 81].map((port) => ({ port }) as Endpoint);
    const s = endpointMapSlot('service-ABCDEFGH-ns/svc/tcp/http', onePort, 'tcp');
    expect(s.bases(0)).toBe(endpointMapSlot('service-ABCDEFGH-ns/svc/tcp/http', twoPorts, 'udp').bases(0));
    // The same shard of the address maps or of the protocol's maps of addresses and ports.
    expect(s.map).toMatch(/^endpoint-ips-[0-9a-f]{2}$/);
    expect(endpointMapSlot('service-ABCDEFGH-ns/svc/tcp/http', twoPorts, 'udp').map).toBe(s.map.replace('endpoint-ips', 'endpoints-udp'));
    const all = Array.from({ length: 8 }, (_, i) => s.bases(i));
    expect(new Set(all).size).toBe(8);
    for (const x of all) expect(x).toBeLessThan(2 ** 31);
  });
});

describe('which Service ports share the DNAT chains', () => {
  /** A cluster of one Service of `type` with `n` endpoints and `spec` added to its spec. */
  function oneService(type: string, n: number, spec = '', node = 'node-b'): string {
    const endpoints = Array.from({ length: n }, (_, i) => `{addresses: [10.180.0.${i + 1}], nodeName: ${node}}`).join(', ');
    const nodePort = type === 'ClusterIP' ? '' : ', nodePort: 30080';
    const lb = type === 'LoadBalancer' ? '\nstatus: {loadBalancer: {ingress: [{ip: 192.168.60.13}]}}' : '';
    return `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: ns, name: web}
spec: {type: ${type}, clusterIP: 172.30.0.10, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080${nodePort}}]${spec}}${lb}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [${endpoints}]
ports: [{name: http, port: 8080, protocol: TCP}]
`;
  }
  const shares = async (yaml: string, n: number) => {
    const text = await compile(yaml, 'fast-load', 'text', '1.36');
    // The ClusterIP's draw among n in dnat-cluster-ips (every shape of Service has a ClusterIP).
    const shared = new RegExp(`^\\t\\tdnat ip addr \\. port to ip daddr \\. tcp dport \\. numgen random mod ${n}( offset \\d+)? map @service-endpoints-tcp$`, 'm').test(text);
    // A port that shares has no chain of its own; one that does not, no shared chain.
    expect(/^\tchain (service|local)-[A-Z0-9]{8}-/m.test(text)).toBe(!shared);
    return shared;
  };

  it('N x (2D - 1) <= 4C + 1: the ClusterIP alone up to 5 endpoints, with a NodePort up to 3, with a load-balancer IP too 1', async () => {
    const cases: [string, number, boolean][] = [
      ['ClusterIP', 1, true],
      ['ClusterIP', 5, true],
      ['ClusterIP', 6, false],
      ['NodePort', 3, true],
      ['NodePort', 4, false],
      ['LoadBalancer', 1, true],
      ['LoadBalancer', 2, false],
    ];
    for (const [type, n, want] of cases) expect(await shares(oneService(type, n), n), `${type} x ${n}`).toBe(want);
  });

  it('never with session affinity or a Local traffic policy', async () => {
    const affinity = ', sessionAffinity: ClientIP';
    // Two endpoints: with one, the port has no policy chain either (its elements go to the endpoint chain).
    expect(await shares(oneService('ClusterIP', 2, affinity), 2)).toBe(false);
    // The endpoint on this node, so that the Local policy chains have it.
    expect(await shares(oneService('ClusterIP', 1, ', internalTrafficPolicy: Local', 'node-a'), 1)).toBe(false);
    // Local external policy never takes the Cluster ports' chains; its own external chain
    // DNATs in place of both policy chains, or is shared by the Local ports of its counts
    // (local-policy.ts); with few endpoints its ClusterIP is drawn by dnat-cluster-ips.
    for (const n of [1, 2, 3]) {
      const text = await compile(oneService('NodePort', n, ', externalTrafficPolicy: Local', 'node-a'), 'fast-load', 'text', '1.36');
      expect(text).not.toMatch(/^\tchain (dnat-nodeport-|local-[A-Z0-9]{8}-)/m);
      expect(/^\tchain dnat-local-nodeport-tcp-/m.test(text), `${n}`).toBe(n < 3);
      expect(/^\tchain external-[A-Z0-9]{8}-/m.test(text), `${n}`).toBe(n === 3);
      expect(/^\tchain service-[A-Z0-9]{8}-/m.test(text), `${n}`).toBe(n === 3);
      expect(/^\t\tdnat ip addr \. port to ip daddr \. tcp dport/m.test(text), `${n}`).toBe(n < 3);
    }
  });

  it('Local external policy: the shared external chain while 3(C + L)D <= 2(4 + 3(R - 1) + C + L)', async () => {
    // C cluster and L local endpoints (the first L on this node), D external destinations
    // (the NodePort, a load-balancer IP, external IPs), R rules of its own external chain
    // (pod traffic, local traffic twice, the local endpoints).
    const form = async (c: number, l: number, externalIPs: number) => {
      const ips = Array.from({ length: externalIPs }, (_, i) => `192.168.99.${i + 1}`).join(', ');
      const spec = `, externalTrafficPolicy: Local${externalIPs ? `, externalIPs: [${ips}]` : ''}`;
      const yaml = oneService('LoadBalancer', c, spec, 'node-b').replace(/nodeName: node-b/g, (all, at: number, whole: string) => (whole.slice(0, at).split('nodeName').length - 1 < l ? 'nodeName: node-a' : all));
      const text = await compile(yaml, 'fast-load', 'text', '1.36');
      return /^\tchain dnat-local-external-/m.test(text) ? 'shared' : /^\tchain external-/m.test(text) ? 'own' : 'none';
    };
    // D = 2: C = L = 1: 12 <= 30; C = L = 2: 24 <= 34; C = 2, L = 0: 12 <= 24.
    expect(await form(1, 1, 0)).toBe('shared');
    expect(await form(2, 2, 0)).toBe('shared');
    expect(await form(2, 0, 0)).toBe('shared');
    // C = 2, L = 1: D = 3: 27 <= 32; D = 4: 36 > 32. C = 1, L = 1, D = 5: 30 <= 30.
    expect(await form(2, 1, 1)).toBe('shared');
    expect(await form(2, 1, 2)).toBe('own');
    expect(await form(1, 1, 3)).toBe('shared');
    expect(await form(1, 1, 4)).toBe('own');
    // Three endpoints: the cluster chain stays for the ClusterIP, and the external chain goes to it.
    expect(await form(3, 1, 0)).toBe('own');
  });
});

describe('firewall chains shared by the ports that allow the same sources', () => {
  const lb = (name: string, vip: string, ranges: string) => `---
apiVersion: v1
kind: Service
metadata: {namespace: ns, name: ${name}}
spec: {type: LoadBalancer, clusterIP: 172.30.0.${vip.split('.')[3]}, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080, nodePort: 300${vip.split('.')[3]}}], loadBalancerSourceRanges: [${ranges}]}
status: {loadBalancer: {ingress: [{ip: ${vip}}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns, name: ${name}-1, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
endpoints: [{addresses: [10.180.0.${vip.split('.')[3]}], nodeName: node-b}]
ports: [{name: http, port: 8080, protocol: TCP}]
`;
  const yaml = `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
${lb('a', '192.168.60.11', '203.0.113.0/24, 198.51.100.0/24')}${lb('b', '192.168.60.12', '203.0.113.0/24, 198.51.100.0/24')}${lb('c', '192.168.60.13', '198.51.100.0/24, 203.0.113.0/24')}${lb('d', '192.168.60.14', '203.0.113.0/24')}`;

  it('one chain for a and b (the same sources, in the same order), one each for c (another order) and d', async () => {
    const text = await compile(yaml, 'fast-load', 'text', '1.36');
    const targets = new Map([...text.matchAll(/^add element ip kube-proxy firewall-ips \{ (192\.168\.60\.\d+) \. tcp \. 80 comment "[^"]*" : goto (\S+) \}$/gm)].map((m) => [m[1], m[2]]));
    expect([...targets.keys()]).toEqual(['192.168.60.11', '192.168.60.12', '192.168.60.13', '192.168.60.14']);
    const [a, b, c, d] = [...targets.values()];
    expect(a).toBe(b);
    expect(new Set([a, c, d]).size).toBe(3);
    expect([...text.matchAll(/^\tchain (firewall-sources-\S+) \{$/gm)].map((m) => m[1])).toEqual([a, c, d]);
    expect(text).toContain(`\tchain ${a} {\n\t\tip saddr 203.0.113.0/24 return\n\t\tip saddr 198.51.100.0/24 return\n\t\tdrop\n\t}`);
  });

  it('lets in and drops the sources kube-proxy\'s chains do, for every port', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-fw-'));
    try {
      const file = path.join(dir, 'cluster.yaml');
      fs.writeFileSync(file, yaml);
      let dropped = 0;
      for (const vip of ['192.168.60.11', '192.168.60.12', '192.168.60.13', '192.168.60.14']) {
        for (const src of ['203.0.113.9', '198.51.100.9', '192.0.2.9']) {
          const trace = async (layout: string) => {
            const r = await kproxc(['trace', file, '--layout', layout, '--kube-proxy-version', '1.36', '--src', src, '--dst', vip, '--dport', '80', '--json']);
            expect(r.code, r.stderr).toBe(0);
            const { verdict, endpoints, masquerade } = JSON.parse(r.stdout) as { verdict: string; endpoints: string[]; masquerade: boolean };
            return { verdict, endpoints, masquerade };
          };
          const kp = await trace('kube-proxy');
          expect(await trace('fast-load'), `${src} to ${vip}`).toEqual(kp);
          if (kp.verdict === 'drop') dropped++;
        }
      }
      // 192.0.2.9 everywhere, 198.51.100.9 at d.
      expect(dropped).toBe(5);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
