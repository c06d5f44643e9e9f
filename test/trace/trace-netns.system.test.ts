// Cross-check on the real kernel: the compiled ruleset is loaded into a private namespace,
// real TCP connections go through it, and what happens to them (DNAT to which endpoints,
// masquerade, drop, reject, or nothing) must be what `kproxc trace` says for the same
// packet. Random small clusters, plus kube-proxy's tracer flows on its overall ruleset.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { kindArgs } from '../helpers/fixtures.js';
import { kproxc, ROOT } from '../helpers/kproxc.js';
import { LAB, PacketLab } from '../helpers/packet-lab.js';
import { randomCluster, samplePackets, withSnapshotFile } from '../helpers/random-cluster.js';
import { readFlows } from '../helpers/trace.js';
import { traceBesideKernel, type Case } from '../helpers/trace-vs-kernel.js';

const SEEDS = [11, 23, 57];
const clusters = SEEDS.map((s) => ({ seed: s, ...randomCluster(s) }));
const overallFile = path.join(ROOT, 'test/trace/kube-proxy/overall.yaml');
const overallEndpoints = ['10.180.0.1', '10.180.0.2', '10.180.0.3', '10.180.0.4', '10.180.0.5', 'fd00:10:180::1', 'fd00:10:180::2:1'];
const ipv6Endpoints = ['fd00:10:180::3', 'fd00:10:180::4', 'fd00:10:180::5', 'fd00:10:180::6'];
/**
 * Every kind of table (each kube-proxy release's, and fast-load's): each compiled, loaded
 * and sent packets, beside the trace of kube-proxy's table of the same release.
 */
const TABLES = TABLE_KINDS.map((kind) => ({
  table: kind.name,
  fastLoad: kind.layout === 'fast-load',
  compile: kindArgs(kind),
  trace: ['--kube-proxy-version', kind.version],
}));

let lab: PacketLab;
beforeAll(async () => {
  const endpoints = [...new Set([...overallEndpoints, ...ipv6Endpoints, ...clusters.flatMap((c) => c.endpointIPs)])];
  lab = await PacketLab.open('trc', endpoints, [80, 8080], [80, 81, 3001, 3002, 3003, 3004]);
});
afterAll(() => lab?.close());

/** Traces each packet, sends it for real, and compares verdict, endpoint set and masquerade. */
function crossCheck(file: string, ruleset: string, cases: Case[], args: string[] = []) {
  return traceBesideKernel(lab, ruleset, file, cases, args);
}

describe('trace agrees with real nft on real packets', () => {
  for (const c of clusters) {
    it(`random cluster, seed ${c.seed}`, () =>
      withSnapshotFile(c, async (file) => {
        const compiled = await kproxc(['compile', file]);
        expect(compiled.code, compiled.stderr).toBe(0);
        const packets = samplePackets(c.seed, c.targets, 14).map((p, i) => ({ name: `#${i}`, ...p }));
        const rows = crossCheck(file, compiled.stdout, packets);
        for (const row of rows) expect(row.traced, row.packet).toEqual(row.real);
        // The sample must exercise more than one kind of outcome to mean anything.
        expect(new Set(rows.map((r) => r.real.verdict)).size, JSON.stringify(rows.map((r) => r.real.verdict))).toBeGreaterThan(1);
      }));
  }

  it("kube-proxy's overall ruleset with the flows of its packet tracer", async () => {
    const compiled = await kproxc(['compile', overallFile]);
    expect(compiled.code).toBe(0);
    const flows = readFlows(path.join(ROOT, 'test/trace/kube-proxy/overall.json')).cases[0].packets;
    // The "no match" flow goes to an address nothing routes here, and a packet with a node
    // source cannot be sent from outside (the kernel drops it as martian): node sources are
    // sent from the node itself, which the traces below follow with --from-node.
    const cases = flows.filter((f) => f.name !== 'no match' && f.name !== 'local, mark for masquerade').map((f) => ({ name: f.name, src: f.sourceIP, dst: f.destIP, port: f.destPort }));
    cases.push({ name: 'NodePort on the secondary node IP', src: '203.0.113.2', dst: '192.168.1.2', port: 3003 });
    const rows = crossCheck(overallFile, compiled.stdout, cases);
    for (const row of rows) expect(row.traced, row.packet).toEqual(row.real);
    expect(rows.find((r) => r.packet.startsWith('local, sent by the node itself'))?.real.verdict).toBe('drop');
  });

  it.each(TABLES)('IPv6: kube-proxy\'s NodePort flows ($table)', async ({ compile, trace }) => {
    const file = path.join(ROOT, 'test/trace/kube-proxy/nodeports-v6.yaml');
    for (const c of readFlows(path.join(ROOT, 'test/trace/kube-proxy/nodeports.json')).cases.filter((x) => x.name?.startsWith('ipv6'))) {
      const compiled = await kproxc(['compile', file, ...compile, ...(c.args ?? [])]);
      expect(compiled.code).toBe(0);
      const cases = c.packets.map((f) => ({ name: `${c.name}: ${f.name}`, src: f.sourceIP, dst: f.destIP, port: f.destPort }));
      const rows = crossCheck(file, compiled.stdout, cases, [...trace, ...(c.args ?? [])]);
      for (const row of rows) expect(row.traced, row.packet).toEqual(row.real);
    }
  });

  // IPv6 Services of each of fast-load's forms of endpoint choice (an own chain drawing from
  // a map of addresses, or of addresses and ports; the shared DNAT chains; Local policy,
  // shared or in the port's own chains; affinity's endpoint chains), in every table.
  it.each(TABLES)('IPv6: Services of every form of endpoint choice ($table)', ({ fastLoad, compile, trace }) =>
    withSnapshotFile({ seed: 6, yaml: IPV6_FORMS }, async (file) => {
      const compiled = await kproxc(['compile', file, ...compile]);
      expect(compiled.code, compiled.stderr).toBe(0);
      // fast-load's table has each of its ip6 forms.
      if (fastLoad) {
        for (const form of [
          /^\t\tmeta l4proto tcp dnat to numgen random mod 6 offset \d+ map @endpoint-ips-[0-9a-f]{2}:80$/m,
          /^\t\tmeta l4proto tcp dnat ip6 addr \. port to numgen random mod 6 offset \d+ map @endpoints-tcp-[0-9a-f]{2}$/m,
          /^\tchain external-\S+-ns\/f\/tcp\/p80 \{\n(\t\t.*\n)*\t\tmeta l4proto tcp dnat to numgen random mod 2 offset \d+ map @endpoint-ips-[0-9a-f]{2}:80\n\t\}/m,
          /^\tchain dnat-local-nodeport-tcp-2-1 \{$/m,
          /^\tchain dnat-nodeport-tcp-2 \{$/m,
          /^\t\tdnat ip6 addr \. port to ip6 daddr \. tcp dport \. numgen random mod 2 offset 1 map @service-endpoints-tcp$/m,
          /^\t\tupdate @affinity \{ ip6 saddr \. numgen random mod 1 offset \d+ \. numgen random mod 1 offset \d+ timeout 10800s \} meta l4proto tcp dnat to \[fd00:10:180::1\]:8080$/m,
        ]) {
          expect(compiled.stdout).toMatch(form);
        }
      }
      const pod = LAB.clientPod6;
      const outside = LAB.clientExternal6;
      const cases = [
        ...['a', 'b', 'c', 'd'].map((s) => ({ name: `pod to ClusterIP ${s}`, src: pod, dst: `fd00:10:96::${s}1`, port: 80 })),
        { name: 'outside to the Local NodePort', src: outside, dst: '2001:db8::1', port: 3002 },
        { name: 'pod to the Local NodePort', src: pod, dst: '2001:db8::1', port: 3002 },
        { name: 'outside to the NodePort of two endpoints', src: outside, dst: '2001:db8::1', port: 3003 },
        { name: 'node to the NodePort of two endpoints', src: '2001:db8::1', dst: '2001:db8::1', port: 3003 },
        { name: 'pod to ClusterIP f', src: pod, dst: 'fd00:10:96::f1', port: 80 },
        { name: 'outside to the Local NodePort of six endpoints', src: outside, dst: '2001:db8::1', port: 3004 },
        { name: 'pod to the Local NodePort of six endpoints', src: pod, dst: '2001:db8::1', port: 3004 },
      ];
      const rows = crossCheck(file, compiled.stdout, cases, trace);
      for (const row of rows) expect(row.traced, row.packet).toEqual(row.real);
      // Each ClusterIP reaches all its endpoints: the draws found every element.
      expect(rows.slice(0, 4).map((r) => r.real.endpoints.length)).toEqual([6, 6, 2, 2]);
      // The Local NodePort of six reaches the two on this node from outside, all six from a pod.
      expect(rows.slice(-2).map((r) => r.real.endpoints.length)).toEqual([2, 6]);
      // With affinity the kernel keeps the client on the first endpoint it reached: one of
      // those the trace gives, through the same DNAT.
      const [sticky] = crossCheck(file, compiled.stdout, [{ name: 'pod to ClusterIP e, with affinity', src: pod, dst: 'fd00:10:96::e1', port: 80 }], trace);
      expect(sticky.traced.endpoints).toHaveLength(3);
      expect(sticky.real.endpoints).toHaveLength(1);
      expect(sticky.traced.endpoints).toContain(sticky.real.endpoints[0]);
      expect({ ...sticky.real, endpoints: [] }).toEqual({ ...sticky.traced, endpoints: [] });
    }),
  );
});

const SIX = ['fd00:10:180::1', 'fd00:10:180::2:1', 'fd00:10:180::3', 'fd00:10:180::4', 'fd00:10:180::5', 'fd00:10:180::6'];
/** The endpoints on this node. */
const LOCAL = new Set(['fd00:10:180::2:1', 'fd00:10:180::5']);

/** An IPv6 cluster with a Service port of each of fast-load's forms of endpoint choice. */
const IPV6_FORMS = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: fd00:10::/64
detectLocalMode: ClusterCIDR
nodePortAddresses: [2001:db8::1/128]
---
apiVersion: v1
kind: Node
metadata: {name: test-node}
status: {addresses: [{type: InternalIP, address: 2001:db8::1}]}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: kubernetes}
spec: {cidrs: [fd00:10:96::/112]}
${[
  // a: six endpoints on one port (an own chain, a map of addresses).
  service('a', 'ClusterIP', '', '', SIX.map((ip): [string, number] => [ip, 80])),
  // b: six endpoints, one on another port (an own chain, a map of addresses and ports).
  service('b', 'ClusterIP', '', '', SIX.map((ip, i): [string, number] => [ip, i === 5 ? 8080 : 80])),
  // c: Local policy, one endpoint on this node and one elsewhere (a shared external chain).
  service('c', 'NodePort', ', nodePort: 3002', ', externalTrafficPolicy: Local', [['fd00:10:180::2:1', 80], ['fd00:10:180::4', 80]]),
  // d: two endpoints behind a NodePort (the shared DNAT chains).
  service('d', 'NodePort', ', nodePort: 3003', '', [['fd00:10:180::1', 80], ['fd00:10:180::3', 80]]),
  // f: Local policy, two endpoints on this node and four elsewhere (the port's own chains).
  service('f', 'NodePort', ', nodePort: 3004', ', externalTrafficPolicy: Local', SIX.map((ip): [string, number] => [ip, 80])),
  // e: session affinity (endpoint chains and a draw map).
  service('e', 'ClusterIP', '', ', sessionAffinity: ClientIP', [['fd00:10:180::1', 8080], ['fd00:10:180::3', 8080], ['fd00:10:180::4', 8080]]),
].join('')}`;

/** A Service `s` of `type`, with more fields of its port and of its spec, and its endpoints' slices, a slice per port. */
function service(s: string, type: string, portFields: string, specFields: string, endpoints: [string, number][]): string {
  const ports = [...new Set(endpoints.map(([, port]) => port))];
  const slices = ports.map((port) => {
    const eps = endpoints.filter(([, p]) => p === port).map(([ip]) => `{addresses: [${ip}], nodeName: ${LOCAL.has(ip) ? 'test-node' : 'other-node'}}`);
    return `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns, name: ${s}-${port}, labels: {kubernetes.io/service-name: ${s}}}
addressType: IPv6
endpoints: [${eps.join(', ')}]
ports: [{name: p80, port: ${port}, protocol: TCP}]
`;
  });
  return `---
apiVersion: v1
kind: Service
metadata: {namespace: ns, name: ${s}}
spec: {type: ${type}, clusterIP: 'fd00:10:96::${s}1', ports: [{name: p80, port: 80, protocol: TCP${portFields}}]${specFields}}
${slices.join('')}`;
}
