// Two Service ports claiming one destination, on real data planes: the ruleset of
// fixtures/service-conflicts.yaml loaded into real nft, real TCP connections from outside
// and from the node itself, and the golden bundle loaded into a private OVS and traced with
// ofproto/trace from outside and from a node address. Every destination two Services claim
// must be served by its owner (the first in name order: its endpoint, or a reject when it
// has none) for both kinds of sender, and `kproxc trace` must say the same.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIP } from '../../src/net/ip.js';
import { summarize } from '../../src/trace/result.js';
import { CLAIMED, CONFLICTS_FILE, NODE, OUTSIDE } from '../helpers/conflicts.js';
import { GOLDEN } from '../helpers/fixtures.js';
import { kproxc } from '../helpers/kproxc.js';
import { traceAllBuckets, type Outcome } from '../helpers/ovs-expect.js';
import { ovsForSuite } from '../helpers/ovs.js';
import { PacketLab } from '../helpers/packet-lab.js';
import { packetOf, tracerFor } from '../helpers/trace.js';

const owner = (c: (typeof CLAIMED)[number]) => (c.endpoints.length ? { verdict: 'dnat', endpoints: c.endpoints } : { verdict: 'reject', endpoints: [] });

describe('real nft: the owner of a claimed destination serves outside and node-local packets', () => {
  let lab: PacketLab | undefined;
  beforeAll(async () => {
    // The node answers on the claimed ports itself: a packet no rule took would show as "none".
    lab = await PacketLab.open('cfl', ['10.180.0.1', '10.180.0.2', '10.180.0.3', '10.180.0.4'], [80], [80, 81, 30100, 30200]);
  });
  afterAll(() => lab?.close());

  it('every claimed destination, from outside and from the node', async () => {
    const compiled = await kproxc(['compile', CONFLICTS_FILE]);
    expect(compiled.code).toBe(0);
    lab!.load(compiled.stdout);
    const tracer = tracerFor(CONFLICTS_FILE);
    const cases = CLAIMED.flatMap((c) => [OUTSIDE, NODE].map((src) => ({ c, src })));
    const seen = lab!.probe(cases.map(({ c, src }) => ({ src, dst: c.dst, port: c.port, tries: 1 })));
    cases.forEach(({ c, src }, i) => {
      const label = `${c.what}, from ${src === NODE ? 'the node' : 'outside'}`;
      const real = seen[i];
      expect({ verdict: real.verdict, endpoints: real.endpoints }, `${label}: ${real.raw.join(' ')}`).toEqual(owner(c));
      const traced = summarize(tracer.trace(packetOf({ sourceIP: src, destIP: c.dst, destPort: c.port, fromNode: src === NODE })));
      expect({ verdict: traced.verdict, endpoints: [...traced.endpoints].sort(), masquerade: traced.masquerade }, label).toEqual({
        verdict: real.verdict,
        endpoints: real.endpoints,
        masquerade: real.masquerade,
      });
    });
  });
});

describe('real OVS: the owner of a claimed destination serves outside and node-local packets', () => {
  const ovs = ovsForSuite();

  it('every claimed destination, from outside and from a node address', () => {
    ovs().loadBundle(fs.readFileSync(path.join(GOLDEN, 'service-conflicts.ovs'), 'utf8'));
    const tracer = tracerFor(CONFLICTS_FILE, [], 'ovs');
    for (const c of CLAIMED) {
      for (const src of [OUTSIDE, NODE]) {
        const label = `${c.what}, from ${src}`;
        const { traces } = traceAllBuckets(ovs(), { family: 4, protocol: 'TCP', src: parseIP(src)!, dst: parseIP(c.dst)!, port: c.port }, 40000);
        const want: Outcome = c.endpoints.length ? { kind: 'endpoints', endpoints: c.endpoints } : { kind: 'controller' };
        for (const t of traces) expect(t.result.outcome, label).toEqual(want);
        const walked = summarize(tracer.trace(packetOf({ sourceIP: src, destIP: c.dst, destPort: c.port, fromNode: src === NODE })));
        expect({ verdict: walked.verdict, endpoints: [...walked.endpoints].sort() }, label).toEqual(owner(c));
      }
    }
  });
});
