// Cross-check of `kproxc trace --backend ovs` against real Open vSwitch: the compiled bundle
// is loaded into a private ovs-vswitchd and each packet is traced with ofproto/trace over
// every dp_hash value of the group it meets (so every bucket is seen). The walker's verdict,
// endpoint set, and which endpoints are reached SNATed (hairpin) must be what OVS shows.
// Random clusters (Services of random type and traffic policies, source ranges, external
// IPs; endpoints local or remote, ready, terminating or not serving) with every target
// from every kind of source; and, for every golden case, every local endpoint reaching
// itself through its Service's ClusterIP. (The golden cases' Service addresses from
// outside and from a local Pod are cross-checked in
// test/backends/ovs/ovs-trace.system.test.ts.)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOvs } from '../../src/compile-ovs.js';
import { loadModel, outputText } from '../../src/compile.js';
import { servicePortKey, type FamilyModel } from '../../src/model/types.js';
import { formatIP, parseIP } from '../../src/net/ip.js';
import { ovsCases } from '../helpers/ovs-cases.js';
import { traceAllBuckets, walkedOutcome, type Outcome, type Probe } from '../helpers/ovs-expect.js';
import { parseArgsToOptions } from '../helpers/options.js';
import { startOvs, type Ovs } from '../helpers/ovs.js';
import { LAB } from '../helpers/packet-lab.js';
import { randomCluster } from '../helpers/random-cluster.js';
import { fixtureText } from '../helpers/fixtures.js';
import { tracerFor } from '../helpers/trace.js';

const SPORT = 40000;
const SEEDS = [7, 19, 31, 43];

/** A probe without an expectation: OVS itself is what the walker is held to here. */
type Packet = Omit<Probe, 'expect'>;

interface Seen {
  outcome: Outcome;
  /** Endpoint → reached with its source SNATed (hairpin). */
  snat: Map<string, boolean>;
  sampled: boolean;
}

function observe(ovs: Ovs, p: Packet): Seen {
  const { traces, sampled } = traceAllBuckets(ovs, p, SPORT);
  const kinds = new Set(traces.map((t) => t.result.outcome.kind));
  if (kinds.size !== 1) return { outcome: { kind: 'endpoints', endpoints: [`mixed: ${[...kinds].join(',')}`] }, snat: new Map(), sampled };
  const snat = new Map<string, boolean>();
  for (const t of traces) if (t.result.outcome.kind === 'endpoints') for (const e of t.result.outcome.endpoints) snat.set(e, t.snat);
  const outcome: Outcome = traces[0].result.outcome.kind === 'endpoints' ? { kind: 'endpoints', endpoints: [...snat.keys()].sort() } : traces[0].result.outcome;
  return { outcome, snat, sampled };
}

let ovs: (Ovs & { stop(): void }) | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-ovstrace-'));
beforeAll(() => {
  ovs = startOvs();
});
afterAll(() => {
  try {
    ovs?.stop();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

/** Loads the snapshot's bundle, then traces every packet both ways; returns how many were hairpins. */
function crossCheck(file: string, args: string[], packets: Packet[]): { hairpins: number; outcomes: Set<string> } {
  const text = fixtureText(file);
  const compiled = compileOvs([{ name: file, text }], parseArgsToOptions(args));
  ovs!.loadBundle(outputText(compiled.output));
  const tracer = tracerFor(file, args, 'ovs');
  let hairpins = 0;
  const outcomes = new Set<string>();
  for (const p of packets) {
    const label = `${p.what}: ${p.protocol} ${formatIP(p.src)} -> ${formatIP(p.dst)}:${p.port}`;
    const seen = observe(ovs!, p);
    const walked = walkedOutcome(tracer, p, SPORT);
    outcomes.add(walked.outcome.kind);
    if (seen.sampled && walked.outcome.kind === 'endpoints' && seen.outcome.kind === 'endpoints') {
      expect(seen.outcome.endpoints.filter((e) => !(walked.outcome as { endpoints: string[] }).endpoints.includes(e)), label).toEqual([]);
    } else {
      expect(walked.outcome, label).toEqual(seen.outcome);
    }
    for (const [ep, snat] of seen.snat) expect(walked.snat.get(ep), `${label}: SNAT on the way to ${ep}`).toBe(snat);
    if ([...seen.snat.values()].some(Boolean)) hairpins++;
  }
  return { hairpins, outcomes };
}

/**
 * Every local endpoint of every Service port, sending to its own Service's ClusterIP; not
 * for groups above 64 buckets, where OVS hashes the packet and a trace sees only a sample.
 */
function hairpinPackets(m: FamilyModel): Packet[] {
  return m.servicePorts.flatMap((sp) =>
    (m.endpoints.get(servicePortKey(sp.id)) ?? [])
      .filter((e, _i, all) => e.isLocal && all.length <= 64)
      .map((e) => ({ what: `${servicePortKey(sp.id)} from its endpoint ${e.key}`, family: m.family, protocol: sp.id.protocol, src: e.ip, dst: sp.clusterIP, port: sp.port })),
  );
}

describe('trace --backend ovs agrees with ofproto/trace on real OVS', () => {
  for (const seed of SEEDS) {
    it(`random cluster, seed ${seed}`, () => {
      const c = randomCluster(seed);
      // A Pod CIDR for the node, so that local Pods (LAB.clientPod) take the short-circuit flows.
      const yaml = c.yaml.replace('metadata: {name: test-node}\n', 'metadata: {name: test-node}\nspec: {podCIDR: 10.0.0.0/24}\n');
      expect(yaml).not.toBe(c.yaml);
      const file = path.join(tmp, `random-${seed}.yaml`);
      fs.writeFileSync(file, yaml);
      const sources = [LAB.clientExternal, LAB.clientBlocked, LAB.clientPod, LAB.nodeIPs[0]];
      const packets: Packet[] = c.targets.flatMap((t) =>
        sources.map((src) => ({ what: `seed ${seed}`, family: 4 as const, protocol: 'TCP' as const, src: parseIP(src)!, dst: parseIP(t.dst)!, port: t.port })),
      );
      const model = loadModel([{ name: file, text: yaml }], {});
      const { outcomes } = crossCheck(file, [], [...packets, ...model.families.flatMap(hairpinPackets)]);
      expect(outcomes.has('endpoints')).toBe(true);
    });
  }

  it('every local endpoint of every golden case reaching itself through its Service', () => {
    let hairpins = 0;
    let cases = 0;
    for (const c of ovsCases()) {
      const model = loadModel([{ name: c.file, text: c.text }], parseArgsToOptions(c.args));
      const packets = model.families.flatMap(hairpinPackets);
      if (packets.length === 0) continue;
      cases++;
      hairpins += crossCheck(c.file, c.args, packets).hairpins;
    }
    expect(cases).toBeGreaterThan(5);
    expect(hairpins).toBeGreaterThan(10);
  });
});
