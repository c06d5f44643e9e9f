// Real packets through kproxc's OVS flows: the namespace cluster of packets.system.test.ts
// with its node as a userspace Open vSwitch bridge (docs/dataplane-tests.md, "The OVS
// variant") loaded with `kproxc compile --backend ovs` through `ovs-ofctl bundle`. Each
// snapshot of test/dataplane/ is loaded in turn into the same bridge.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { Cluster, DEFAULT_CONFIG } from '../helpers/dataplane/cluster.js';
import { OVS_PREFIX, type OvsNode, ovsNode } from '../helpers/dataplane/ovs-node.js';
import { OVS_SCENARIOS } from '../helpers/dataplane/ovs-scenarios.js';
import { HARNESS_CHECK } from '../helpers/dataplane/scenarios.js';
import { removeStaleNamespaces } from '../helpers/dataplane/stale.js';
import { ROOT } from '../helpers/kproxc.js';
import { removeStaleOvs } from '../helpers/ovs.js';

const SNAPSHOTS = ['cluster-a.yaml', 'cluster-b.yaml'].map((f) => path.join(ROOT, 'test/dataplane', f));

let cluster: Cluster<OvsNode> | undefined;

beforeAll(async () => {
  // A run killed outright leaves its daemons running in its namespaces: stop them first.
  removeStaleOvs(OVS_PREFIX);
  removeStaleNamespaces(OVS_PREFIX);
  cluster = await Cluster.create(SNAPSHOTS, DEFAULT_CONFIG, ovsNode());
});

afterAll(async () => {
  await cluster?.destroy();
});

const built = (): Cluster<OvsNode> => {
  if (!cluster) throw new Error('the namespace cluster was not built (see the beforeAll error)');
  return cluster;
};

for (const file of SNAPSHOTS) {
  describe(`${path.basename(file)} loaded with kproxc compile --backend ovs`, () => {
    beforeAll(() => built().load(file));
    // The bridge forwards nothing without flows (fail-mode secure), so the harness check runs
    // through the first snapshot's pipeline: it also shows that traffic to no Service passes
    // it. Once, before any Service connection, as in the nftables suite: a direct connection
    // that reuses a client port of an earlier Service connection to the same endpoint
    // clashes with that connection's conntrack entry and fails, in any conntrack.
    if (file === SNAPSHOTS[0]) it(HARNESS_CHECK.name, () => HARNESS_CHECK.run(built(), built().snapshot(file)));
    for (const s of OVS_SCENARIOS) it(s.name, () => s.run(built(), built().snapshot(file)));
  });
}
