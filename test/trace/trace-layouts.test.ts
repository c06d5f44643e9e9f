// The nftables layouts trace alike: every golden fixture, with packets derived from its
// snapshot (each Service address and port from outside, a Pod, the node and the Service's
// own endpoints, NodePorts on every node address, external and load-balancer IPs from
// allowed and refused sources, an unused port, an unallocated Service address, and the same
// from a client with affinity; a quick run takes every third of them), the same for the
// benchmark's clusters of a few hundred Services, and every packet of kube-proxy's packet
// expectations. For each packet, the branches' outcomes (verdict, endpoint, masquerade,
// affinity written) must be the same multiset.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';

import { UsageError } from '../../src/diag/diagnostic.js';
import { cidrContains, formatIP } from '../../src/net/ip.js';
import { clusterObjects, makeCluster, renderSnapshot } from '../../scripts/gen-snapshot.mjs';
import { hostPort, type TracePacket } from '../../src/trace/packet.js';
import { fcSize } from '../helpers/fc-runs.js';
import { fixtureArgs, fixtureText, listFixtures } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/kproxc.js';
import { affinityPackets, compareLayouts, derivedPackets, endpointsOf, layoutPair, type LayoutPair } from '../helpers/layout-trace.js';
import { parseArgsToOptions } from '../helpers/options.js';
import { flowDir, packetOf, readFlows } from '../helpers/trace.js';

const KINDS = TABLE_KINDS.map((k) => k.name);
const FIRST = KINDS[0];

const label = (p: TracePacket) =>
  `${p.protocol} ${formatIP(p.src)} -> ${formatIP(p.dst)}:${p.dport}${p.iif ? ` iif ${p.iif}` : ''}${p.fromNode ? ' from the node' : ''}${p.affinity ? ` affinity ${hostPort(p.affinity.ip, p.affinity.port)}` : ''}`;

/** Traces every packet in every layout; returns how many branches were compared, and what was seen. */
function checkAll(pair: LayoutPair, packets: TracePacket[], where: string): { branches: number; verdicts: Set<string> } {
  let branches = 0;
  tracedPackets += packets.length;
  const verdicts = new Set<string>();
  for (const p of packets) {
    const out = compareLayouts(pair, p);
    const reference = out[FIRST];
    for (const layout of KINDS) expect(out[layout], `${where}: ${layout}: ${label(p)}`).toEqual(reference);
    branches += reference.length;
    for (const o of reference) {
      const b = JSON.parse(o) as { verdict: string; masquerade: boolean; affinity: string[] };
      verdicts.add(b.verdict);
      if (b.masquerade) verdicts.add('masquerade');
      if (b.affinity.length) verdicts.add('affinity');
    }
  }
  return { branches, verdicts };
}

/**
 * A client with affinity to endpoint E, whose first connection could have reached E,
 * reaches E and nothing else, in both layouts.
 */
function checkSticky(pair: LayoutPair, packets: TracePacket[], where: string): void {
  for (const p of packets) {
    const e = hostPort(p.affinity!.ip, p.affinity!.port);
    const fresh = endpointsOf(compareLayouts(pair, { ...p, affinity: undefined })[FIRST]);
    if (!fresh.includes(e)) continue;
    const out = compareLayouts(pair, p);
    for (const layout of KINDS) expect(endpointsOf(out[layout]), `${where}: ${layout}: ${label(p)} with affinity to ${e}`).toEqual([e]);
    stickyChecked++;
  }
}

let stickyChecked = 0;
/** A quick run (FC_RUNS unset) traces every third derived packet; npm test traces them all. */
const STRIDE = fcSize(1, 3);
const seen = new Set<string>();
let compared = 0;
let tracedPackets = 0;

describe('the layouts trace alike', () => {
  describe('every golden fixture, packets derived from its snapshot', () => {
    for (const f of listFixtures()) {
      it(f.name, () => {
        const pair = layoutPair(f.file, f.text, parseArgsToOptions(f.args));
        for (const m of pair.model.families) {
          const packets = derivedPackets(m).filter((_, i) => i % STRIDE === 0);
          const sticky = affinityPackets(m, derivedPackets(m)).filter((_, i) => i % STRIDE === 0);
          const r = checkAll(pair, [...packets, ...sticky], f.name);
          compared += r.branches;
          for (const v of r.verdicts) seen.add(v);
          checkSticky(pair, sticky, f.name);
        }
      });
    }
  });

  describe("every packet of kube-proxy's packet expectations", () => {
    const dir = flowDir(ROOT);
    for (const file of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
      it(file, () => {
        for (const c of readFlows(path.join(dir, file)).cases) {
          const snapshot = path.join(dir, c.snapshot);
          const text = fixtureText(snapshot);
          const pair = layoutPair(snapshot, text, parseArgsToOptions([...fixtureArgs(text), ...(c.args ?? [])]));
          const r = checkAll(pair, c.packets.map(packetOf), c.snapshot);
          compared += r.branches;
          for (const v of r.verdicts) seen.add(v);
        }
      });
    }
  });

  // The benchmark's mix at a few hundred Services: many policy chains in each shard of the
  // endpoint and affinity draw maps (their key ranges side by side), ports with few
  // endpoints sharing DNAT chains by count, Local-policy forms, affinity; the fixtures and
  // the random clusters have a handful of Services each.
  describe("the benchmark's clusters, packets derived from each", () => {
    const shapes: { services: number; endpoints: number; affinity?: 'all' }[] = [
      { services: 300, endpoints: 10 },
      { services: 500, endpoints: 3 },
      { services: 400, endpoints: 1 },
      { services: 60, endpoints: 10, affinity: 'all' },
    ];
    for (const shape of shapes) {
      const name = `${shape.services} Services x ${shape.endpoints}${shape.affinity ? ', affinity on every one' : ''}`;
      it(name, () => {
        const yaml = renderSnapshot(clusterObjects(makeCluster(shape.services, { endpoints: shape.endpoints, mixed: true, affinity: shape.affinity })), 'yaml');
        const pair = layoutPair(`${name}.yaml`, yaml, {});
        let refused = 0;
        for (const m of pair.model.families) {
          const derived = derivedPackets(m);
          // A client with affinity to a terminating endpoint: no table has a chain for it,
          // and every one refuses the packet alike.
          const sticky = affinityPackets(m, derived).filter((p) => {
            const refusals = KINDS.map((k) => {
              try {
                pair.tracers[k].trace(p);
                return '';
              } catch (e) {
                if (!(e instanceof UsageError)) throw e;
                return e.message;
              }
            });
            for (const r of refusals) expect(r, label(p)).toBe(refusals[0]);
            if (refusals[0]) refused++;
            return !refusals[0];
          });
          const r = checkAll(pair, [...derived, ...sticky].filter((_, i) => i % STRIDE === 0), name);
          expect(r.branches).toBeGreaterThan(shape.services / STRIDE);
          checkSticky(pair, sticky.filter((_, i) => i % STRIDE === 0), name);
        }
        expect(refused).toBeLessThan(shape.services);
      });
    }
  });

  it('source ranges: a source inside one is let through and one outside all is dropped, in every layout', () => {
    const f = listFixtures().find((x) => x.name === 'loadbalancer-source-ranges')!;
    const pair = layoutPair(f.file, f.text, parseArgsToOptions(f.args));
    let checked = 0;
    for (const m of pair.model.families) {
      for (const sp of m.servicePorts.filter((x) => x.loadBalancerSourceRanges.length > 0)) {
        for (const p of derivedPackets(m).filter((x) => x.dport === sp.port && sp.loadBalancerVIPs.some((v) => formatIP(v) === formatIP(x.dst)) && !x.fromNode)) {
          const allowed = sp.loadBalancerSourceRanges.some((r) => cidrContains(r, p.src)) || sp.loadBalancerVIPs.some((v) => formatIP(v) === formatIP(p.src));
          for (const layout of KINDS) {
            const verdicts = pair.tracers[layout].trace(p).branches.map((b) => b.verdict);
            expect(verdicts.includes('drop'), `${layout} ${label(p)}`).toBe(!allowed);
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('compared every kind of outcome', () => {
    expect([...seen].sort()).toEqual(['affinity', 'dnat', 'drop', 'masquerade', 'none', 'reject']);
    expect(tracedPackets).toBeGreaterThan(1500 / STRIDE);
    expect(stickyChecked).toBeGreaterThan(60 / STRIDE);
    expect(compared).toBeGreaterThan(1800 / STRIDE);
  });
});
