// Property: for random clusters and random packets, the kube-proxy and fast-load layouts
// trace alike (the same multiset of branch outcomes: verdict, endpoint, masquerade,
// affinity written). Clusters come from both random generators of the tests: a small
// cluster put through random changes (types, traffic policies, affinity, source ranges,
// UDP ports, endpoints moved or put on other port numbers), and the cross-checks' clusters
// (terminating and not-serving endpoints, internal policy, external IPs); and their twins in
// IPv6 or with SCTP ports (test/helpers/cluster-twins.ts), for the ip6 table's and SCTP's
// forms. Packets are drawn from those worth sending at the cluster
// (test/helpers/layout-trace.ts), some from a client that already has affinity to an
// endpoint, with a random source or protocol now and then.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';

import { parseIP } from '../../src/net/ip.js';
import { hostPort, type L4Protocol, type TracePacket } from '../../src/trace/packet.js';
import { applyChange, changeArb, initialCluster, snapshot } from '../helpers/cluster-changes.js';
import { fcParams } from '../helpers/fc-runs.js';
import { ipv6Twin, sctpTwin } from '../helpers/cluster-twins.js';
import { affinityPackets, compareLayouts, derivedPackets, endpointsOf, layoutPair } from '../helpers/layout-trace.js';
import { randomCluster } from '../helpers/random-cluster.js';

const KINDS = TABLE_KINDS.map((k) => k.name);
const FIRST = KINDS[0];

const ipv4ClusterArb = fc.oneof(
  fc.record({ services: fc.integer({ min: 1, max: 5 }), changes: fc.array(changeArb, { maxLength: 8 }) }).map(({ services, changes }) => {
    const c = initialCluster(services);
    for (const ch of changes) applyChange(c, ch);
    return snapshot(c);
  }),
  fc.record({ seed: fc.integer({ min: 1, max: 0x7fffffff }), services: fc.integer({ min: 1, max: 5 }) }).map(({ seed, services }) => randomCluster(seed, services).yaml),
);

// A third of the clusters in IPv6, a third with SCTP ports for TCP ones (the two independent).
const clusterArb = fc
  .record({ yaml: ipv4ClusterArb, ipv6: fc.constantFrom(false, false, true), sctp: fc.constantFrom(false, false, true) })
  .map(({ yaml, ipv6, sctp }) => (ipv6 ? ipv6Twin : (y: string) => y)(sctp ? sctpTwin(yaml) : yaml));

const packetArb = fc.record({
  pick: fc.nat(),
  src: fc.option(fc.oneof(fc.ipV4(), fc.ipV4().map(ipv6Twin)), { freq: 4 }),
  protocol: fc.option(fc.constantFrom<L4Protocol>('tcp', 'udp', 'sctp'), { freq: 4 }),
});

describe('kube-proxy and fast-load layouts trace alike', () => {
  it('random clusters, random packets', () => {
    let traced = 0;
    let sticky = 0;
    let shifted = 0;
    let ipv6 = 0;
    let sctp = 0;
    fc.assert(
      fc.property(clusterArb, fc.array(packetArb, { minLength: 1, maxLength: 12 }), (yaml, specs) => {
        const pair = layoutPair('random.yaml', yaml, {});
        // Endpoints of one Service port on different port numbers: another form of endpoint map.
        if (yaml.includes('-shift1000')) shifted++;
        const pool = pair.model.families.flatMap((m) => {
          const derived = derivedPackets(m);
          return [...derived, ...affinityPackets(m, derived)];
        });
        for (const s of specs) {
          const base = pool[s.pick % pool.length];
          const p: TracePacket = { ...base, ...(s.src !== null ? { src: parseIP(s.src)!, fromNode: undefined } : {}), ...(s.protocol !== null ? { protocol: s.protocol } : {}) };
          if (p.src.family !== p.dst.family) continue;
          if (p.fromNode === undefined) delete p.fromNode;
          const out = compareLayouts(pair, p);
          for (const layout of KINDS) expect(out[layout], layout).toEqual(out[FIRST]);
          traced++;
          // IPv6 and SCTP packets that reached an endpoint: through the ip6 table's and SCTP's forms.
          const reached = endpointsOf(out[FIRST]).some((e) => e !== null);
          if (p.src.family === 6 && reached) ipv6++;
          if (p.protocol === 'sctp' && reached) sctp++;
          if (!p.affinity) continue;
          // A client with affinity to E, whose first connection could reach E, reaches E only.
          const e = hostPort(p.affinity.ip, p.affinity.port);
          if (endpointsOf(compareLayouts(pair, { ...p, affinity: undefined })[FIRST]).includes(e)) {
            expect(endpointsOf(out[FIRST])).toEqual([e]);
            sticky++;
          }
        }
      }),
      fcParams(300),
    );
    expect(traced).toBeGreaterThan(0);
    expect(sticky).toBeGreaterThan(0);
    expect(shifted).toBeGreaterThan(0);
    expect(ipv6).toBeGreaterThan(0);
    expect(sctp).toBeGreaterThan(0);
  });
});
