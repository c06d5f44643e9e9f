// Cross-check on the real kernel: the compiled ruleset is loaded into a private namespace,
// real TCP connections go through it, and what happens to them (DNAT to which endpoints,
// masquerade, drop, reject, or nothing) must be what `kproxc trace` says for the same
// packet. Random small clusters, plus kube-proxy's tracer flows on its overall ruleset.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kproxc, ROOT } from '../helpers/kproxc.js';
import { PacketLab } from '../helpers/packet-lab.js';
import { randomCluster, samplePackets, withSnapshotFile } from '../helpers/random-cluster.js';
import { readFlows } from '../helpers/trace.js';
import { traceBesideKernel, type Case } from '../helpers/trace-vs-kernel.js';

const SEEDS = [11, 23, 57];
const clusters = SEEDS.map((s) => ({ seed: s, ...randomCluster(s) }));
const overallFile = path.join(ROOT, 'test/trace/kube-proxy/overall.yaml');
const overallEndpoints = ['10.180.0.1', '10.180.0.2', '10.180.0.3', '10.180.0.4', '10.180.0.5', 'fd00:10:180::1', 'fd00:10:180::2:1'];

let lab: PacketLab;
beforeAll(async () => {
  const endpoints = [...new Set([...overallEndpoints, ...clusters.flatMap((c) => c.endpointIPs)])];
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

  it('IPv6: kube-proxy\'s NodePort flows', async () => {
    const file = path.join(ROOT, 'test/trace/kube-proxy/nodeports-v6.yaml');
    for (const c of readFlows(path.join(ROOT, 'test/trace/kube-proxy/nodeports.json')).cases.filter((x) => x.name?.startsWith('ipv6'))) {
      const compiled = await kproxc(['compile', file, ...(c.args ?? [])]);
      expect(compiled.code).toBe(0);
      const cases = c.packets.map((f) => ({ name: `${c.name}: ${f.name}`, src: f.sourceIP, dst: f.destIP, port: f.destPort }));
      const rows = crossCheck(file, compiled.stdout, cases, c.args ?? []);
      for (const row of rows) expect(row.traced, row.packet).toEqual(row.real);
    }
  });
});
