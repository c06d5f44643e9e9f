// What `kproxc trace` says of packets beside what real nft does with them in a packet lab:
// the suites that hold the tracer (or another layout) to the kernel share this comparison.
import { summarize } from '../../src/trace/result.js';
import { enoughToSeeAll } from './dataplane/expect.js';
import type { PacketLab, Probe } from './packet-lab.js';
import { packetOf, tracerFor } from './trace.js';

export interface Case {
  name: string;
  src: string;
  dst: string;
  port: number;
}

/**
 * Loads `ruleset` into the lab, traces each packet with the rules compiled from `file` and
 * `args`, sends it for real, and gives both outcomes (verdict, endpoint set, masquerade).
 */
export function traceBesideKernel(lab: PacketLab, ruleset: string, file: string, cases: Case[], args: string[] = []) {
  lab.load(ruleset);
  const tracer = tracerFor(file, args);
  // The lab sends a packet from a node address from the node itself.
  const traced = cases.map((c) =>
    summarize(tracer.trace(packetOf({ sourceIP: c.src, destIP: c.dst, destPort: c.port, fromNode: lab.isNodeAddress(c.src) }))),
  );
  // Enough tries of a random choice that each endpoint shows up; one when there is no choice.
  const tries = (n: number) => (n > 1 ? enoughToSeeAll(n) : 1);
  const probes: Probe[] = cases.map((c, i) => ({ src: c.src, dst: c.dst, port: c.port, tries: tries(traced[i].endpoints.length) }));
  const seen = lab.probe(probes);
  return cases.map((c, i) => ({
    packet: `${c.name}: ${c.src} -> ${c.dst}:${c.port}`,
    traced: { verdict: traced[i].verdict, endpoints: [...traced[i].endpoints].sort(), masquerade: traced[i].masquerade },
    real: { verdict: seen[i].verdict, endpoints: seen[i].endpoints, masquerade: seen[i].masquerade },
  }));
}
