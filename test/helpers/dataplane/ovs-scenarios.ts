// The scenarios of the OVS variant (docs/dataplane-tests.md): the shared ClusterIP and
// NodePort scenarios of scenarios.ts, with the source address the ovs backend gives
// NodePort traffic, and the no-endpoint case as the ovs backend defines it. As in the
// nftables suite, what may answer comes from the snapshot, never from the flows.
import { expect } from 'vitest';
import { type Cluster, EXTERNAL } from './cluster.js';
import { failedWith } from './expect.js';
import { type OvsNode, VIRTUAL_NODEPORT_IP } from './ovs-node.js';
import { monitorPacketIns, type PacketIn } from './packet-in.js';
import { ofFamily } from './plan.js';
import type { ProbeJob, ProbeResult } from './processes.js';
import { client, clusterIPSpread, externalIPFromOutside, externalLocal, jobsWithoutEndpoints, lbSourceRanges, nodePortFromOutside, routerAddr, type Scenario } from './scenarios.js';
import { familyOf } from './snapshot.js';

/** How long each attempt at a Service without endpoints waits for the answer that must not come. */
const UNANSWERED_MS = 300;
/** Attempts per Service port; sent together, so the scenario costs one UNANSWERED_MS per origin. */
const ATTEMPTS = 2;

/**
 * The ovs backend hands a packet for a Service port without endpoints to the controller with
 * Antrea's reject reason, where Antrea's agent would answer with a TCP reset or an ICMP
 * unreachable. There is no agent here, only a monitor on the controller channel that answers
 * nothing. "Refused" is therefore: every attempt reaches the controller as
 * `reason=no_match, userdata=04` with its own addresses and port, and none is answered, so
 * the connection times out (after UNANSWERED_MS, which bounds the scenario).
 */
const noEndpointsToController: Scenario<Cluster<OvsNode>> = {
  name: 'a Service without endpoints sends every packet to the controller to be rejected, and nothing answers',
  async run(c, snap) {
    const unanswered = (j: ProbeJob): ProbeJob => ({ ...j, count: ATTEMPTS, timeoutMs: UNANSWERED_MS, parallel: true });
    const { inner, outer } = jobsWithoutEndpoints(snap, unanswered);
    const monitor = await monitorPacketIns(c.backend.ovs);
    let results: ProbeResult[][][] = [];
    let packetIns: PacketIn[] = [];
    try {
      results = await Promise.all([c.probe(client(c).name, inner), c.probe(EXTERNAL, outer)]);
    } finally {
      packetIns = await monitor.stop();
    }
    const sources = [(j: ProbeJob) => ofFamily(client(c).addrs, familyOf(j.host))[0], (j: ProbeJob) => routerAddr(c, familyOf(j.host))];
    [inner, outer].forEach((jobs, side) => {
      jobs.forEach((j, i) => {
        const src = sources[side](j);
        const what = `${j.proto} ${side === 0 ? 'ClusterIP' : 'NodePort'} ${j.host}:${j.port} from ${src}`;
        failedWith(results[side][i], 'ETIMEDOUT', what);
        const mine = packetIns.filter((p) => p.proto === j.proto && p.src === src && p.dst === j.host && p.dport === j.port);
        expect(mine.length, `${what}: each attempt reaches the controller`).toBeGreaterThanOrEqual(ATTEMPTS);
        expect(new Set(mine.map((p) => `${p.reason} userdata=${p.userdata}`)), `${what}: as a reject`).toEqual(new Set(['no_match userdata=04']));
      });
    });
  },
};

const virtualNodePortIP = { of: (family: 4 | 6) => VIRTUAL_NODEPORT_IP[family], label: 'the virtual NodePort IP' };

/**
 * The ovs backend's pipeline changes a source address only for hairpin connections
 * (docs/ovs-backend.md), so NodePort endpoints see the client's own address.
 */
export const OVS_SCENARIOS: Scenario<Cluster<OvsNode>>[] = [
  clusterIPSpread(4),
  nodePortFromOutside(4, { source: 'kept' }),
  nodePortFromOutside(4, { source: 'kept', address: virtualNodePortIP }),
  externalIPFromOutside('kept'),
  lbSourceRanges,
  externalLocal,
  noEndpointsToController,
  clusterIPSpread(6),
  nodePortFromOutside(6, { source: 'kept' }),
  nodePortFromOutside(6, { source: 'kept', address: virtualNodePortIP }),
];
