// The fast-load layout on the real kernel: real TCP connections through it must do what
// `kproxc trace` says kube-proxy's layout does with the same packets (verdict, endpoint
// set, masquerade), spread evenly over the endpoints, keep ClientIP affinity on every path
// to a Service, and both its text and JSON forms must load.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterObjects, makeCluster, renderSnapshot } from '../../../scripts/gen-snapshot.mjs';
import { elementPerLine } from '../../helpers/diff-nft.js';
import { kproxc, ROOT } from '../../helpers/kproxc.js';
import { TABLE_KINDS, type TableKind } from '../../../src/backends/nftables/layout.js';
import { kindArgs } from '../../helpers/fixtures.js';
import { fcRuns } from '../../helpers/fc-runs.js';
import { canonicalListing, withNetns } from '../../helpers/netns.js';
import { LAB, PacketLab } from '../../helpers/packet-lab.js';
import { randomCluster, samplePackets, withSnapshotFile } from '../../helpers/random-cluster.js';
import { readFlows } from '../../helpers/trace.js';
import { traceBesideKernel, type Case } from '../../helpers/trace-vs-kernel.js';

// Three random clusters in `npm test`; FC_RUNS=10x sends packets through thirty.
const SEEDS = Array.from({ length: fcRuns(3, process.env.FC_RUNS) }, (_, i) => [11, 23, 57][i] ?? 1000 + 37 * i);
const clusters = SEEDS.map((s) => ({ seed: s, ...randomCluster(s) }));
const overallFile = path.join(ROOT, 'test/trace/kube-proxy/overall.yaml');
const overallEndpoints = ['10.180.0.1', '10.180.0.2', '10.180.0.3', '10.180.0.4', '10.180.0.5', 'fd00:10:180::1', 'fd00:10:180::2:1'];
const labFile = path.join(ROOT, 'test/dataplane/fast-load-cluster.yaml');
const labEndpoints = ['10.180.1.1', '10.180.1.2', '10.180.1.3', '10.180.2.1', '10.180.3.1', '10.180.3.2'];

let lab: PacketLab;
beforeAll(async () => {
  const endpoints = [...new Set([...overallEndpoints, ...labEndpoints, ...clusters.flatMap((c) => c.endpointIPs)])];
  lab = await PacketLab.open('fl', endpoints, [80, 8080, 9090], [80, 81, 3001, 3002, 3003, 3004]);
});
afterAll(() => lab?.close());

/** kube-proxy 1.35's table, or fast-load (whose chains are 1.35's in every release). */
async function compiled(file: string, layout: string, args: string[] = []): Promise<string> {
  const r = await kproxc(['compile', '--layout', layout, '--kube-proxy-version', '1.35', file, ...args]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

async function compiledAs(file: string, kind: TableKind): Promise<string> {
  const r = await kproxc(['compile', ...kindArgs(kind), file]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** kube-proxy's layout traced, the fast-load layout loaded and sent the same packets. */
async function crossCheck(file: string, cases: Case[]) {
  return traceBesideKernel(lab, await compiled(file, 'fast-load'), file, cases);
}

describe('fast-load does on real packets what kube-proxy\'s layout traces', () => {
  for (const c of clusters) {
    it(`random cluster, seed ${c.seed}`, () =>
      withSnapshotFile(c, async (file) => {
        const packets = samplePackets(c.seed, c.targets, 14).map((p, i) => ({ name: `#${i}`, ...p }));
        const rows = await crossCheck(file, packets);
        for (const row of rows) expect(row.real, row.packet).toEqual(row.traced);
        expect(new Set(rows.map((r) => r.real.verdict)).size, JSON.stringify(rows.map((r) => r.real.verdict))).toBeGreaterThan(1);
      }));
  }

  it('a port with affinity and one endpoint: its chain writes the member and DNATs, and no endpoint chain', async () => {
    // lone: ClusterIP, ClientIP affinity, one endpoint.
    const text = await compiled(labFile, 'fast-load');
    expect(text).toMatch(/^\tchain service-\S+-lab\/lone\/tcp\/http \{\n\t\tupdate @affinity \{ ip saddr \. numgen random mod 1 offset \d+ \. numgen random mod 1( offset \d+)? timeout \d+s \} meta l4proto tcp dnat to 10\.180\.2\.1:8080\n\t\}$/m);
    expect(text).not.toMatch(/^\tchain affinity-record-\S+-lab\/lone\//m);
    expect(text).not.toMatch(/^\tchain endpoint-/m);
    const rows = await crossCheck(labFile, [
      { name: 'from outside', src: LAB.clientExternal, dst: '172.30.0.12', port: 80 },
      { name: 'from a pod', src: LAB.clientPod, dst: '172.30.0.12', port: 80 },
    ]);
    for (const row of rows) {
      expect(row.real, row.packet).toEqual(row.traced);
      expect(row.real.endpoints).toEqual(['10.180.2.1:8080']);
    }
  });

  describe('a Service port whose endpoints listen on different ports (addresses and ports in its map)', () => {
    const file = path.join(ROOT, 'fixtures/endpoint-ports-differ.yaml');
    const cases = [
      { name: 'from outside', src: LAB.clientExternal, dst: '172.30.0.51', port: 80 },
      { name: 'from a pod', src: LAB.clientPod, dst: '172.30.0.51', port: 80 },
      { name: 'NodePort', src: LAB.clientExternal, dst: LAB.nodeIPs[0], port: 30080 },
    ];
    async function check(yaml: string, form: RegExp | ((text: string) => void), only = cases) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-fl-ports-'));
      try {
        const f = path.join(dir, 'cluster.yaml');
        fs.writeFileSync(f, yaml);
        const text = await compiled(f, 'fast-load');
        if (form instanceof RegExp) expect(text).toMatch(form);
        else form(text);
        const rows = await crossCheck(f, only);
        for (const row of rows) expect(row.real, row.packet).toEqual(row.traced);
        // Each endpoint on its own port: 8080 for two of them, 9090 for the third.
        expect(rows[0].real.endpoints).toEqual(['10.180.0.1:8080', '10.180.0.2:8080', '10.180.0.3:9090']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    it('Cluster policy, a NodePort and an external IP: the port\'s own chains, drawing from an endpoint map of addresses and ports', () => {
      const external = fs.readFileSync(file, 'utf8').replace('  type: NodePort\n', '  type: NodePort\n  externalIPs: [192.168.99.51]\n');
      expect(external).toContain('externalIPs');
      return check(external, /dnat ip addr \. port to numgen random mod 3 offset \d+ map @endpoints-tcp-/);
    });

    it('Cluster policy, a NodePort: the DNAT chains shared by Service ports of three endpoints, for the ClusterIP and the NodePort', () =>
      check(fs.readFileSync(file, 'utf8'), /^\t\tdnat ip addr \. port to tcp dport \. numgen random mod 3 map @nodeport-endpoints-tcp$/m));

    it('Cluster policy, the ClusterIP alone: the DNAT chains shared by Service ports of three endpoints', () => {
      const clusterIP = fs.readFileSync(file, 'utf8').replace('  type: NodePort\n', '  type: ClusterIP\n').replace(', nodePort: 30080}', '}');
      expect(clusterIP).not.toContain('30080');
      // No NodePort: a packet to 30080 would meet the node's own stack, which the trace does not model.
      return check(clusterIP, /^\t\tdnat ip addr \. port to ip daddr \. tcp dport \. numgen random mod 3 offset 3 map @service-endpoints-tcp$/m, cases.slice(0, 2));
    });

    it('the ClusterIP alone, after the rules of other counts: a draw that finds no element goes on to the next rule', () => {
      // Two Services before it (ns0 sorts first) bring the rules drawing among one and two.
      const before = (name: string, ip: string, endpoints: string[]) => `---
apiVersion: v1
kind: Service
metadata: {namespace: ns0, name: ${name}}
spec: {clusterIP: ${ip}, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns0, name: ${name}-1, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
endpoints: [${endpoints.map((a) => `{addresses: [${a}]}`).join(', ')}]
ports: [{name: http, port: 8080, protocol: TCP}]
`;
      const clusterIP = fs.readFileSync(file, 'utf8').replace('  type: NodePort\n', '  type: ClusterIP\n').replace(', nodePort: 30080}', '}');
      const yaml = `${clusterIP}${before('one', '172.30.0.61', ['10.180.0.1'])}${before('two', '172.30.0.62', ['10.180.0.1', '10.180.0.2'])}`;
      const tcpDraws = (text: string) =>
        [...text.matchAll(/^\t\tdnat ip addr \. port to ip daddr \. tcp dport \. numgen random mod (\d+)(?: offset \d+)? map @service-endpoints-tcp$/gm)].map((m) => Number(m[1]));
      return check(yaml, (text) => expect(tcpDraws(text)).toEqual([1, 2, 3]), cases.slice(0, 2));
    });

    const localPolicy = () => fs.readFileSync(file, 'utf8').replace('  type: NodePort\n', '  type: NodePort\n  externalTrafficPolicy: Local\n');

    it('Local external policy: the cluster chain, drawing from an endpoint map of addresses and ports; the local chain\'s DNAT in the external chain', () => {
      const local = localPolicy();
      expect(local).toContain('externalTrafficPolicy: Local');
      const nodePortFromPod = { name: 'NodePort from a pod', src: LAB.clientPod, dst: LAB.nodeIPs[0], port: 30080 };
      return check(
        local,
        (text) => {
          expect(text).toMatch(/^\tchain service-\S+-ns1\/web\/tcp\/http \{\n\t\tmeta l4proto tcp dnat ip addr \. port to numgen random mod 3 offset \d+ map @endpoints-tcp-/m);
          expect(text).toMatch(/^\tchain external-\S+-ns1\/web\/tcp\/http \{\n(\t\t.*\n){3}\t\tmeta l4proto tcp dnat to numgen random mod 1 offset \d+ map @endpoint-ips-[0-9a-f]{2}:8080\n\t\}/m);
          expect(text).not.toMatch(/^\tchain local-/m);
        },
        [...cases, nodePortFromPod],
      );
    });

    // Without web-new: 10.180.0.1 (on this node) and 10.180.0.2, both on 8080.
    const twoEndpoints = (yaml: string) => yaml.replace(/---\napiVersion: discovery\.k8s\.io\/v1\nkind: EndpointSlice\nmetadata: \{namespace: ns1, name: web-new[\s\S]*$/, '');
    it.each([
      ['the external chain shared by the Local ports of 2 and 1 endpoints', '', /^\tchain dnat-local-nodeport-tcp-2-1 \{\n\t\tip saddr 10\.0\.0\.0\/8 dnat ip addr \. port to tcp dport \. numgen random mod 2 map @nodeport-endpoints-tcp comment "short-circuit pod traffic"$/m],
      [
        'with three external IPs, its own external chain with both policy chains\' DNAT',
        '  externalIPs: [192.168.99.51, 192.168.99.52, 192.168.99.53]\n',
        /^\t\tip saddr 10\.0\.0\.0\/8 meta l4proto tcp dnat to numgen random mod 2 offset \d+ map @endpoint-ips-[0-9a-f]{2}:8080 comment "short-circuit pod traffic"$/m,
      ],
    ])('Local external policy, two endpoints, one local: %s, the ClusterIP drawn by dnat-cluster-ips', async (_name, spec, form) => {
      const yaml = twoEndpoints(localPolicy()).replace('  externalTrafficPolicy: Local\n', `  externalTrafficPolicy: Local\n${spec}`);
      expect(yaml).not.toContain('web-new');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-fl-local-'));
      try {
        const f = path.join(dir, 'cluster.yaml');
        fs.writeFileSync(f, yaml);
        const text = await compiled(f, 'fast-load');
        expect(text).not.toMatch(/^\tchain (service|local)-\S+-ns1\/web\/tcp\//m);
        expect(text).toMatch(form);
        expect(text).toMatch(/^\t\tdnat ip addr \. port to ip daddr \. tcp dport \. numgen random mod 2 offset 1 map @service-endpoints-tcp$/m);
        const both = ['10.180.0.1:8080', '10.180.0.2:8080'];
        const rows = await crossCheck(f, [
          { name: 'ClusterIP from outside', src: LAB.clientExternal, dst: '172.30.0.51', port: 80 },
          { name: 'ClusterIP from a pod', src: LAB.clientPod, dst: '172.30.0.51', port: 80 },
          { name: 'NodePort from outside', src: LAB.clientExternal, dst: LAB.nodeIPs[0], port: 30080 },
          { name: 'NodePort from a pod', src: LAB.clientPod, dst: LAB.nodeIPs[0], port: 30080 },
        ]);
        for (const row of rows) expect(row.real, row.packet).toEqual(row.traced);
        expect(rows.map((r) => r.real.endpoints)).toEqual([both, both, ['10.180.0.1:8080'], both]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it("kube-proxy's overall ruleset with the flows of its packet tracer", async () => {
    const flows = readFlows(path.join(ROOT, 'test/trace/kube-proxy/overall.json')).cases[0].packets;
    const cases = flows.filter((f) => f.name !== 'no match' && f.name !== 'local, mark for masquerade').map((f) => ({ name: f.name, src: f.sourceIP, dst: f.destIP, port: f.destPort }));
    const rows = await crossCheck(overallFile, cases);
    for (const row of rows) expect(row.real, row.packet).toEqual(row.traced);
  });
});

/**
 * Seconds until the client's affinity element expires, in whichever dynamic set holds it
 * (kube-proxy's per-endpoint sets, or the table-wide one whose key starts with the client).
 */
function clientExpiry(listing: string, client: string): number {
  type Elem = { elem: { val: string | { concat: (string | number)[] }; expires?: number } };
  const sets = (JSON.parse(listing) as { nftables: { set?: { elem?: Elem[] } }[] }).nftables.flatMap((x) => x.set?.elem ?? []);
  // Only the members of sets with timeouts are objects with an expiry.
  const timed = sets.filter((e) => typeof e === 'object' && e !== null && 'elem' in e);
  const mine = timed.filter((e) => (typeof e.elem.val === 'string' ? e.elem.val : e.elem.val.concat[0]) === client);
  expect(mine, listing).toHaveLength(1);
  return mine[0].elem.expires!;
}

/** Sum over endpoints of (observed - expected)^2 / expected. */
function chiSquare(counts: number[], n: number): number {
  const expected = n / counts.length;
  return counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
}

/**
 * How many of `raw`'s connections each endpoint (`ADDRESS:8080`) answered, and how many
 * were answered. Every connection is answered by one of them but for a few the client gave
 * up on (TIMEOUT, after 400 ms: a run of the whole suite on two cores has let one of 600 go
 * by); a rule that sent some elsewhere, rejected or dropped them, would show far more than
 * one in a hundred.
 */
function answersPerEndpoint(raw: string[], endpoints: string[]): { counts: number[]; n: number } {
  const counts = endpoints.map((ep) => raw.filter((r) => r.split(' ')[1] === `${ep}:8080`).length);
  const n = counts.reduce((a, b) => a + b, 0);
  const timedOut = raw.filter((r) => r === 'TIMEOUT').length;
  expect(n + timedOut, JSON.stringify(raw.filter((r) => !endpoints.some((ep) => r.split(' ')[1] === `${ep}:8080`)))).toBe(raw.length);
  expect(timedOut).toBeLessThanOrEqual(raw.length / 100);
  return { counts, n };
}

describe.each([...TABLE_KINDS])('real packets through $name', (kind) => {
  beforeAll(async () => lab.load(await compiledAs(labFile, kind)));

  it('spreads new connections evenly over the endpoints', () => {
    const n = 500;
    const [seen] = lab.probe([{ src: LAB.clientExternal, dst: '172.30.0.10', port: 80, tries: n }]);
    expect(seen.raw).toHaveLength(n);
    const { counts, n: got } = answersPerEndpoint(seen.raw, ['10.180.0.1', '10.180.0.2', '10.180.0.3', '10.180.0.4', '10.180.0.5']);
    // 4 degrees of freedom: 33.38 is exceeded by chance once in a million runs (twelve such
    // checks a run of the suite); a draw that gives one endpoint twice its share reaches 56.
    expect(chiSquare(counts, got), JSON.stringify(counts)).toBeLessThan(33.38);
  });

  it('spreads new connections evenly over the endpoints of a port that shares the DNAT chains, on ClusterIP and NodePort', () => {
    const n = 600;
    const seen = lab.probe([
      { src: LAB.clientExternal, dst: '172.30.0.14', port: 80, tries: n },
      { src: LAB.clientExternal, dst: LAB.nodeIPs[0], port: 30014, tries: n },
    ]);
    for (const s of seen) {
      expect(s.raw).toHaveLength(n);
      const { counts, n: got } = answersPerEndpoint(s.raw, ['10.180.0.1', '10.180.0.2']);
      // 1 degree of freedom: 23.93 is exceeded by chance once in a million runs; a 60/40
      // split of 600 reaches 24.
      expect(chiSquare(counts, got), JSON.stringify(counts)).toBeLessThan(23.93);
    }
  });

  it('keeps a client on one endpoint over ClusterIP, NodePort and external IP', () => {
    const paths = [
      { dst: '172.30.0.11', port: 80 },
      { dst: LAB.nodeIPs[0], port: 30011 },
      { dst: '192.168.50.11', port: 80 },
    ];
    const seen = lab.probe(paths.map((p) => ({ src: LAB.clientExternal, ...p, tries: 8 })));
    for (const s of seen) expect(s.verdict).toBe('dnat');
    expect(new Set(seen.flatMap((s) => s.endpoints)).size, JSON.stringify(seen.map((s) => s.raw))).toBe(1);
  });

  it('restarts the client\'s affinity timeout at each new connection, on the affinity path too', async () => {
    const expiry = () => clientExpiry(lab.node.nft(['-j', 'list', 'ruleset']), LAB.clientExternal);
    const before = expiry();
    // The client is remembered for the 60 s of the Service's affinity, wherever it is kept.
    expect(before).toBeGreaterThan(40);
    expect(before).toBeLessThanOrEqual(60);
    await new Promise((r) => setTimeout(r, 2500));
    const waited = expiry();
    expect(waited).toBeLessThanOrEqual(before - 2);
    lab.probe([{ src: LAB.clientExternal, dst: '172.30.0.11', port: 80, tries: 1 }]);
    expect(expiry()).toBeGreaterThan(waited + 1.5);
  });

  it('checks load-balancer source ranges', () => {
    const [allowed, blocked] = lab.probe([
      { src: LAB.clientExternal, dst: '192.168.60.13', port: 80, tries: 3 },
      { src: LAB.clientBlocked, dst: '192.168.60.13', port: 80, tries: 2 },
    ]);
    expect(allowed.verdict).toBe('dnat');
    expect(blocked.verdict).toBe('drop');
  });
});

describe('the fast-load layout loads', () => {
  // Two endpoints a Service: the ports with few destinations share the DNAT chains.
  const yaml = renderSnapshot(clusterObjects(makeCluster(200, { endpoints: 2, mixed: true })), 'yaml');
  for (const format of ['text', 'json']) {
    it(`as ${format}, with the same chains as kube-proxy's layout`, async () => {
      const fl = await kproxc(['compile', '--layout', 'fast-load', '--format', format, '-'], yaml);
      // fast-load keeps the chains of kube-proxy 1.36's table in text but the endpoint
      // chains (their endpoints are map elements, their affinity recorded after NAT) and the
      // chains of ports that share DNAT chains, and one firewall chain for each list of
      // allowed sources; of 1.35's in JSON (endpoint chains).
      const kp = await kproxc(['compile', '--format', format, '--kube-proxy-version', format === 'json' ? '1.35' : '1.36', '-'], yaml);
      // kube-proxy's endpoint chains that update an affinity set.
      const affinityChains = new Set([...kp.stdout.matchAll(/^\tchain (endpoint-\S+) \{\n\t\tupdate @affinity-/gm)].map((m) => m[1]));
      if (format === 'text') expect(affinityChains.size).toBeGreaterThan(40);
      expect(fl.code, fl.stderr).toBe(0);
      const chainsOf = (ruleset: string) =>
        withNetns('fl', (ns) => {
          ns.nft(format === 'json' ? ['-j', '-f', '-'] : ['-f', '-'], ruleset);
          const listing = JSON.parse(ns.nft(['-j', 'list', 'chains'])) as { nftables: { chain?: { name: string } }[] };
          return listing.nftables.flatMap((x) => (x.chain ? [x.chain.name] : [])).sort();
        });
      const chains = await chainsOf(fl.stdout);
      expect(chains.length).toBeGreaterThan(format === 'json' ? 400 : 60);
      const kpChains = await chainsOf(kp.stdout);
      if (format === 'text') expect(kpChains.filter((c) => c.startsWith('endpoint-')).length).toBeGreaterThan(40);
      if (format === 'json') return expect(chains).toEqual(kpChains);
      // A Service port without affinity or Local policy has no chains of its own: its
      // traffic goes to DNAT chains shared by the ports of its protocol and endpoint count;
      // a Local-policy one with few endpoints, to an external chain shared likewise
      // (fast-load.test.ts checks that they reach the same endpoints).
      // Ports that allow the same sources share one firewall chain (fast-load.test.ts checks which).
      const isFirewall = (c: string) => c.startsWith('firewall-') && c !== 'firewall-check';
      expect(chains.filter(isFirewall).every((c) => c.startsWith('firewall-sources-'))).toBe(true);
      expect(chains.filter(isFirewall).length).toBeGreaterThan(0);
      expect(chains.filter(isFirewall).length).toBeLessThan(kpChains.filter(isFirewall).length);
      // No endpoint chains: affinity is recorded after NAT, by a chain per port with affinity.
      expect(chains.filter((c) => c.startsWith('endpoint-'))).toEqual([]);
      const own = kpChains.filter((c) => !c.startsWith('endpoint-') && !isFirewall(c));
      const recording = chains.filter((c) => c.startsWith('affinity-record') || c === 'filter-prerouting-post-dnat');
      expect(recording.length).toBeGreaterThan(affinityChains.size / 2 / 2);
      const shared = chains.filter((c) => /^dnat-((external-|nodeport-)(tcp|udp|sctp)-\d+|local-(external|nodeport)-(tcp|udp|sctp)-\d+-\d+|cluster-ips)$/.test(c) || isFirewall(c) || recording.includes(c));
      expect(shared).toContain('dnat-cluster-ips');
      expect(shared.length).toBeGreaterThan(1);
      const gone = own.filter((c) => !chains.includes(c));
      expect(gone.length).toBeGreaterThan(100);
      for (const c of gone) expect(c).toMatch(/^(service|external|local)-/);
      expect(chains.filter((c) => !shared.includes(c))).toEqual(own.filter((c) => !gone.includes(c)));
    });
  }
});

describe('diff --layout', () => {
  const base = fs.readFileSync(labFile, 'utf8');
  // spread loses one endpoint of five.
  const changed = base.replace(', {addresses: [10.180.0.5], nodeName: node-b}]', ']');
  // spread with Local external policy: it keeps its chains, whose endpoints are in a map.
  const localSpread = (yaml: string) =>
    yaml.replace(
      'spec: {type: ClusterIP, clusterIP: 172.30.0.10, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]}',
      'spec: {type: NodePort, externalTrafficPolicy: Local, clusterIP: 172.30.0.10, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080, nodePort: 30010}]}',
    );

  /** A snapshot's text compiled as `compiled` compiles a file. */
  async function compiledYaml(yaml: string, layout: string): Promise<string> {
    const r = await kproxc(['compile', '--layout', layout, '--kube-proxy-version', '1.35', '-'], yaml);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  }

  /** What a ruleset lists as when loaded fresh into a namespace of its own. */
  const freshListing = (ruleset: string) =>
    withNetns('fl', async (other) => {
      other.nft(['-f', '-'], ruleset);
      return canonicalListing(other.nft(['-j', 'list', 'ruleset']));
    });

  async function diffAgainst(ns: { nft(args: string[], input?: string): string }, yaml: string, layout: string): Promise<string> {
    const live = ns.nft(['-j', 'list', 'ruleset']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-fl-'));
    try {
      fs.writeFileSync(path.join(dir, 'live.json'), live);
      fs.writeFileSync(path.join(dir, 'cluster.yaml'), yaml);
      const r = await kproxc(['diff', '--layout', layout, '--kube-proxy-version', '1.35', path.join(dir, 'cluster.yaml'), '--live', path.join(dir, 'live.json')]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it('moves a live table from one layout to the other and back, and converges', async () => {
    expect(changed).not.toBe(base);
    await withNetns('fl', async (ns) => {
      ns.nft(['-f', '-'], await compiled(labFile, 'kube-proxy'));
      for (const layout of ['fast-load', 'kube-proxy']) {
        const tx = await diffAgainst(ns, base, layout);
        expect(tx, layout).toContain('add rule');
        ns.nft(['-f', '-'], tx);
        expect(await diffAgainst(ns, base, layout), layout).toBe('');
        // What the diff built is what compile's output loads to.
        const fresh = await freshListing(await compiled(labFile, layout));
        expect(canonicalListing(ns.nft(['-j', 'list', 'ruleset'])), layout).toEqual(fresh);
      }
    });
  });

  /**
   * The table as kproxc wrote it when every endpoint map held addresses and ports (one set
   * of maps per protocol) and its key had two fields, the chain's constant and the draw
   * (`C . i`), made from today's by rewriting its endpoint maps.
   */
  function earlierEndpointMaps(text: string): string {
    return twoFieldKeys(addressesWithPorts(text));
  }

  /**
   * Today's address maps (`map @endpoint-ips-XX:P`) of an `ip` table as maps of addresses and
   * ports, one set per protocol (`map @endpoints-tcp-XX`, elements `B : A . P`).
   */
  function addressesWithPorts(text: string): string {
    // Where each key of an address map moves: the protocol's map of its rule, with its port.
    const moved = new Map<string, { map: string; port: string }>();
    const withRules = text.replace(
      /meta l4proto (\w+) dnat to numgen random mod (\d+) offset (\d+) map @endpoint-ips-([0-9a-f]{2}):(\d+)/g,
      (_, proto: string, n: string, base: string, shard: string, port: string) => {
        const map = `endpoints-${proto}-${shard}`;
        for (let i = 0; i < Number(n); i++) moved.set(`${shard} ${Number(base) + i}`, { map, port });
        return `meta l4proto ${proto} dnat ip addr . port to numgen random mod ${n} offset ${base} map @${map}`;
      },
    );
    const elements = new Map<string, string[]>();
    const rest = withRules
      .replace(/^\tmap endpoint-ips-\S+ \{[^\n]*\n/gm, '')
      .replace(/^add element ip kube-proxy endpoint-ips-([0-9a-f]{2}) \{\n((?:\t.*\n)*?)\}\n/gm, (_, shard: string, body: string) => {
        for (const [, key, addr] of body.matchAll(/^\t(\d+) : ([^,\n]+)/gm)) {
          const to = moved.get(`${shard} ${key}`)!;
          elements.set(to.map, [...(elements.get(to.map) ?? []), `\t${key} : ${addr} . ${to.port}`]);
        }
        return '';
      });
    const maps = [...elements.keys()].sort();
    const declared = maps.map((m) => `\tmap ${m} { typeof numgen random mod 1 : ip daddr . ${m.split('-')[1]} dport ; }\n`).join('');
    const added = maps.map((m) => `add element ip kube-proxy ${m} {\n${elements.get(m)!.sort((x, y) => parseInt(x.slice(1)) - parseInt(y.slice(1))).join(',\n')}\n}\n`).join('');
    return rest.replace(/^(table ip kube-proxy \{\n\tcomment [^\n]*\n)/m, `$1${declared}`) + added;
  }

  /** Endpoint maps keyed by one field (B + i) rewritten to two (`B . i`). */
  function twoFieldKeys(text: string): string {
    return text
      .replace(/^(\tmap endpoints-\S+ \{ typeof numgen random mod 1) : /gm, '$1 . numgen random mod 1 : ')
      .replace(/to numgen random mod (\d+) offset (\d+) map @/g, 'to numgen random mod 1 offset $2 . numgen random mod $1 map @')
      .replace(/^add element (ip6? kube-proxy endpoints-\S+) \{\n((?:\t.*\n)*?)\}/gm, (_, set: string, body: string) => {
        // Each chain's keys run B, B+1, ...: they become B . 0, B . 1, ...
        let base = -1;
        let last = -2;
        const lines = body.split('\n').filter(Boolean).map((line) => {
          const m = /^\t(\d+) : (.*)$/.exec(line)!;
          const k = Number(m[1]);
          if (k !== last + 1) base = k;
          last = k;
          return `\t${base} . ${k - base} : ${m[2]}`;
        });
        return `add element ${set} {\n${lines.join('\n')}\n}`;
      });
  }

  it('moves a table of the earlier endpoint maps (two-field keys, addresses and ports) to today\'s in one transaction, and converges', async () => {
    const local = localSpread(base);
    expect(local).not.toBe(base);
    const now = await compiledYaml(local, 'fast-load');
    expect(now).toMatch(/map @endpoint-ips-/);
    const before = earlierEndpointMaps(now);
    expect(before).not.toMatch(/endpoint-ips/);
    expect(before).toMatch(/^\t\d+ \. 1 : 10\.[0-9.]+ \. 8080/m);
    await withNetns('fl', async (ns) => {
      ns.nft(['-f', '-'], before);
      const tx = await diffAgainst(ns, local, 'fast-load');
      // Each map is made again with its new key (a set's type cannot change in place), its
      // chains flushed first; nothing else of the table moves.
      expect(tx).toMatch(/^delete map ip kube-proxy endpoints-tcp-/m);
      expect(tx).not.toMatch(/(delete|flush) table/);
      ns.nft(['-f', '-'], tx);
      expect(await diffAgainst(ns, local, 'fast-load')).toBe('');
      expect(canonicalListing(ns.nft(['-j', 'list', 'ruleset']))).toEqual(await freshListing(now));
    });
  });

  it('keeps a one-endpoint change of a port sharing the DNAT chains to a few lines', async () => {
    // few's second endpoint replaced by another: the same count, the same chains.
    const moved = base.replace('{addresses: [10.180.0.2], nodeName: node-b}]\nports', '{addresses: [10.180.0.3], nodeName: node-b}]\nports');
    expect(moved).not.toBe(base);
    await withNetns('fl', async (ns) => {
      ns.nft(['-f', '-'], await compiled(labFile, 'fast-load'));
      const tx = await diffAgainst(ns, moved, 'fast-load');
      // The second draw's element for each of few's destinations: its ClusterIP (draws
      // among two are keys 1 and 2 of the address map) and its NodePort (0 and 1).
      expect(tx.trim().split('\n').sort(), tx).toEqual(
        [
          'delete element ip kube-proxy nodeport-endpoints-tcp { 30014 . 1 }',
          'add element ip kube-proxy nodeport-endpoints-tcp { 30014 . 1 : 10.180.0.3 . 8080 }',
          'delete element ip kube-proxy service-endpoints-tcp { 172.30.0.14 . 80 . 2 }',
          'add element ip kube-proxy service-endpoints-tcp { 172.30.0.14 . 80 . 2 : 10.180.0.3 . 8080 }',
        ].sort(),
      );
      ns.nft(['-f', '-'], tx);
      expect(await diffAgainst(ns, moved, 'fast-load')).toBe('');
    });
  });

  it('moves a port between its own chains and the shared ones as its endpoints change, and converges', async () => {
    // spread gains a sixth endpoint: 5 on its ClusterIP alone share the DNAT chains, 6 do not.
    const wider = base.replace('{addresses: [10.180.0.5], nodeName: node-b}]', '{addresses: [10.180.0.5], nodeName: node-b}, {addresses: [10.180.0.6], nodeName: node-b}]');
    expect(wider).not.toBe(base);
    await withNetns('fl', async (ns) => {
      ns.nft(['-f', '-'], await compiled(labFile, 'fast-load'));
      // Own chains: a service-ips element for its ClusterIP, the shared elements gone, and
      // the rule that draws among five with them (the table's only port of five).
      const drawAmongFive = 'dnat ip addr . port to ip daddr . tcp dport . numgen random mod 5 offset 10 map @service-endpoints-tcp';
      const toOwn = [
        'add element ip kube-proxy service-ips { 172.30.0.10 . tcp . 80 : goto service-',
        'delete element ip kube-proxy service-endpoints-tcp { 172.30.0.10 . 80 . 14 }',
        `delete rule ip kube-proxy dnat-cluster-ips handle`,
      ];
      // Shared, the ClusterIP has no service-ips element: the rule drawing among five
      // (keys 10 to 14) comes back.
      const toShared = [
        'delete element ip kube-proxy service-ips { 172.30.0.10 . tcp . 80 }',
        `add rule ip kube-proxy dnat-cluster-ips ${drawAmongFive}`,
        'add element ip kube-proxy service-endpoints-tcp { 172.30.0.10 . 80 . 14 : 10.180.0.5 . 8080 }',
      ];
      expect(await compiled(labFile, 'fast-load')).toContain(`\t\t${drawAmongFive}\n`);
      for (const [yaml, lines] of [
        [wider, toOwn],
        [base, toShared],
      ] as const) {
        const tx = await diffAgainst(ns, yaml, 'fast-load');
        for (const line of lines) expect(elementPerLine(tx)).toContain(line);
        ns.nft(['-f', '-'], tx);
        expect(await diffAgainst(ns, yaml, 'fast-load')).toBe('');
        expect(canonicalListing(ns.nft(['-j', 'list', 'ruleset']))).toEqual(await freshListing(await compiledYaml(yaml, 'fast-load')));
      }
    });
  });

  it('keeps a one-endpoint change of a port with its own chains to a few lines', async () => {
    const [before, after] = [localSpread(base), localSpread(changed)];
    expect(before).not.toBe(base);
    await withNetns('fl', async (ns) => {
      ns.nft(['-f', '-'], await compiledYaml(before, 'fast-load'));
      const tx = await diffAgainst(ns, after, 'fast-load');
      expect(tx.trim().split('\n').length, tx).toBeLessThanOrEqual(10);
      // The endpoint is an element of the Service port's endpoint map: element operations,
      // and the one rule whose draw changes (numgen random mod 5 to mod 4).
      expect(tx).toMatch(/delete element ip kube-proxy endpoint-ips-/);
      expect(tx).toMatch(/numgen random mod 4 offset \d+ map @endpoint-ips-[0-9a-f]{2}:8080/);
      ns.nft(['-f', '-'], tx);
      expect(await diffAgainst(ns, after, 'fast-load')).toBe('');
    });
  });
});
