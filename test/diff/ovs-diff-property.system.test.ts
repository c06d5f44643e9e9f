// Property test on a real Open vSwitch (dummy datapath): random cluster histories. Load the
// first compile, then for every step diff the live bridge to the step's snapshot and apply
// the bundle: the bridge then owns exactly what a fresh load holds, and a second diff is
// empty. A flow of another cookie added by hand survives every step.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyChange, cloneCluster, historyArb, initialCluster, snapshot, type Change } from '../helpers/cluster-changes.js';
import { applyBundle, bridgeForSuite, compileBundle, dumps, stepTo } from '../helpers/ovs-diff.js';
import { BRIDGE, type Ovs } from '../helpers/ovs.js';

const FOREIGN = 'cookie=0x42, table=30, priority=5,tcp,tp_dst=22 actions=NORMAL';

async function runHistory(ovs: Ovs, dir: string, h: { services: number; steps: Change[][] }): Promise<void> {
  const cluster = initialCluster(h.services);
  const file = path.join(dir, 'snapshot.yaml');
  fs.writeFileSync(file, snapshot(cluster));
  applyBundle(ovs, await compileBundle(file));
  ovs.ofctl(['add-flow', BRIDGE, 'cookie=0x42,table=30,priority=5,tcp,tp_dst=22,actions=NORMAL']);
  const current = cloneCluster(cluster);
  for (const [i, changes] of h.steps.entries()) {
    for (const ch of changes) applyChange(current, ch);
    fs.writeFileSync(file, snapshot(current));
    await stepTo(ovs, dir, file).catch((e) => {
      throw new Error(`step ${i} (${JSON.stringify(changes)}): ${(e as Error).message}`);
    });
    expect(dumps(ovs).flows, 'the foreign flow is untouched').toContain(` ${FOREIGN}\n`);
  }
}

describe('ovs diff converges on a real bridge over random cluster histories', () => {
  const bridge = bridgeForSuite('ovs-prop');

  it('every step applies, owns what a fresh load holds, and re-diffs empty', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, (h) => runHistory(bridge.ovs, bridge.dir, h)),
      { numRuns: Number(process.env.KPROXC_OVS_DIFF_RUNS ?? 12), endOnFailure: true },
    );
  });
});
