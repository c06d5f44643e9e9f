// Real packets through kproxc's rules: a cluster of network namespaces (docs/dataplane-tests.md)
// whose node loads `kproxc compile` output with nft, and clients that connect to Services
// and check which endpoint answered and which source it saw, against the snapshot. Each
// snapshot of test/dataplane/ is loaded in turn into the same namespaces, in kube-proxy's
// layout and in the fast-load layout (docs/fast-load.md): the same scenarios pass in both.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { Cluster } from '../helpers/dataplane/cluster.js';
import { HARNESS_CHECK, SCENARIOS } from '../helpers/dataplane/scenarios.js';
import { removeStaleNamespaces } from '../helpers/dataplane/stale.js';
import { ROOT } from '../helpers/kproxc.js';

const SNAPSHOTS = ['cluster-a.yaml', 'cluster-b.yaml'].map((f) => path.join(ROOT, 'test/dataplane', f));

let cluster: Cluster | undefined;

beforeAll(async () => {
  removeStaleNamespaces();
  cluster = await Cluster.create(SNAPSHOTS);
});

afterAll(async () => {
  await cluster?.destroy();
});

const built = (): Cluster => {
  if (!cluster) throw new Error('the namespace cluster was not built (see the beforeAll error)');
  return cluster;
};

it(HARNESS_CHECK.name, () => HARNESS_CHECK.run(built(), built().snapshots[0]));

for (const kind of TABLE_KINDS) {
  for (const file of SNAPSHOTS) {
    describe(`${path.basename(file)} loaded with kproxc compile as ${kind.name}`, () => {
      beforeAll(() => built().load(file, kind));
      for (const s of SCENARIOS) it(s.name, () => s.run(built(), built().snapshot(file)));
    });
  }
}
