// A client that already has session affinity: the state its earlier connection left. That
// connection ran the `update` statements that go with the DNAT to the endpoint, which wrote
// the client into the sets the Service chains look up (kube-proxy's layout: the endpoint
// chain's update, into the endpoint's own set, keyed by the client; fast-load: the update
// in the Service chain's rule that DNATs, into one table-wide set, keyed by the client and
// the endpoint's constants). Running those same statements for the client writes exactly
// that, whichever layout the table has.
import { UsageError } from '../../diag/diagnostic.js';
import { hostPort, type TracePacket } from '../packet.js';
import type { Program } from './program.js';
import type { NodeEnv, PacketState } from './state.js';
import { datumText } from './values.js';

/** Fills `s.before` as the client's connection to `packet.affinity` left the sets; returns words for the origin line. */
export function seedAffinity(p: Program, env: NodeEnv, packet: TracePacket, s: PacketState): string {
  if (!packet.affinity) return '';
  const endpoint = hostPort(packet.affinity.ip, packet.affinity.port);
  const writers = p.affinityWriters(endpoint);
  if (writers.length === 0) {
    throw new UsageError(`--affinity ${endpoint}: no rule or endpoint chain of the compiled rules DNATs to it and remembers its clients (is it an endpoint of a Service with sessionAffinity: ClientIP?)`);
  }
  const before = new Map<string, Set<string>>();
  for (const w of writers) {
    const d = w.key(s, env);
    if (d === null) continue;
    before.set(w.set, (before.get(w.set) ?? new Set()).add(datumText(d)));
  }
  s.before = before;
  return `; the client has session affinity to ${endpoint} (an earlier connection reached it)`;
}
