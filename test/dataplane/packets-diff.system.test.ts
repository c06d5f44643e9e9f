// Real packets after `kproxc diff`: the node of the namespace cluster loads snapshot A with
// `kproxc compile`, then moves to snapshot B the way docs/cli.md says a node should
// (`nft -j list ruleset | kproxc diff B --live - | nft -f -`), and every scenario must then
// follow B: the removed web pod never answers, the new one does, legacy's replacement
// answers, reports refuses. Session affinity must outlive the diff where its endpoint does.
// The same in kube-proxy's layout and in the fast-load layout (one table-wide affinity set,
// whose members of removed endpoints the diff deletes: docs/fast-load.md).
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { kindArgs } from '../helpers/fixtures.js';
import { Cluster, type NftLayout } from '../helpers/dataplane/cluster.js';
import { SCENARIOS, STICKY, stickyEndpoints } from '../helpers/dataplane/scenarios.js';
import { readyEndpoints } from '../helpers/dataplane/snapshot.js';
import { removeStaleNamespaces } from '../helpers/dataplane/stale.js';
import { kproxc, ROOT } from '../helpers/kproxc.js';

const A = path.join(ROOT, 'test/dataplane/cluster-a.yaml');
const B = path.join(ROOT, 'test/dataplane/cluster-b.yaml');

describe.each<NftLayout>([...TABLE_KINDS])('the node as $name', (layout) => {
  let cluster: Cluster | undefined;
  /** Which web-sticky endpoint each client source stuck to under A. */
  let stuckInA: Map<string, string> | undefined;
  let moved = false;

  beforeAll(async () => {
    removeStaleNamespaces();
    cluster = await Cluster.create([A, B]);
    await cluster.load(A, layout);
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  const built = (): Cluster => {
    if (!cluster) throw new Error('the namespace cluster was not built (see the beforeAll error)');
    return cluster;
  };

  /** The scenarios below are about B reached by diff; without the diff they cannot run. */
  const movedToB = (): Cluster => {
    if (!moved) throw new Error(`the node was not moved to cluster-b.yaml: kproxc diff failed (see the test "kproxc diff ${kindArgs(layout).join(' ')} --live moves the node ...")`);
    return built();
  };

  it('under cluster-a.yaml each client source sticks to one endpoint of web-sticky', async () => {
    stuckInA = await stickyEndpoints(built(), built().snapshot(A));
  });

  it(`kproxc diff ${kindArgs(layout).join(' ')} --live moves the node from cluster-a.yaml to cluster-b.yaml`, async () => {
    const c = built();
    const script = await c.diff(B, layout);
    expect(script, 'A and B differ, so the transaction is not empty').not.toBe('');
    moved = true;
    // docs/cli.md: once applied, a second diff prints nothing.
    const again = await kproxc(['diff', ...kindArgs(layout), B, '--live', '-'], c.node.nft(['-j', 'list', 'ruleset']));
    expect({ code: again.code, stdout: again.stdout }, 'a second diff prints nothing').toEqual({ code: 0, stdout: '' });
  });

  describe('after kproxc diff to cluster-b.yaml', () => {
    it('ClientIP affinity outlives the diff where its endpoint does, and moves where it does not', async () => {
      const c = movedToB();
      expect(stuckInA, 'affinity was measured under A').toBeDefined();
      const stuckInB = await stickyEndpoints(c, c.snapshot(B));
      const remaining = new Set(readyEndpoints(c.snapshot(B), STICKY, 'http', 4).map((e) => e.addr));
      for (const [src, before] of stuckInA!) {
        const after = stuckInB.get(src)!;
        if (remaining.has(before)) expect(after, `${src} keeps ${before} across the diff`).toBe(before);
        else expect(remaining.has(after), `${src} left the removed ${before} for an endpoint of B`).toBe(true);
      }
    });

    for (const s of SCENARIOS) it(s.name, () => s.run(movedToB(), movedToB().snapshot(B)));
  });
});
