// Golden ovs diffs (golden/ovs-diff/<case>.ofctl), each made against a real bridge and
// applied to it: fixtures/ovs-diff/<case>.before.yaml is loaded into a private Open
// vSwitch, the diff to <case>.after.yaml is compared with its golden file (UPDATE_GOLDEN=1
// rewrites), applied, and the bridge then holds what a fresh load of the after snapshot
// holds, and a second diff is empty.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, golden } from '../helpers/fixtures.js';
import { applyBundle, bridgeForSuite, compileBundle, diffTo, dumps, stepTo } from '../helpers/ovs-diff.js';

const DIR = path.join(FIXTURES, 'ovs-diff');
const CASES = fs
  .readdirSync(DIR)
  .filter((n) => n.endsWith('.before.yaml'))
  .map((n) => n.slice(0, -'.before.yaml'.length))
  .sort();

describe('golden ovs diffs, applied to a real bridge', () => {
  const bridge = bridgeForSuite('ovs-cases');

  it('has cases', () => expect(CASES.length).toBeGreaterThan(3));

  for (const name of CASES) {
    it(name, async () => {
      const before = path.join(DIR, `${name}.before.yaml`);
      const after = path.join(DIR, `${name}.after.yaml`);
      const full = await compileBundle(before);
      applyBundle(bridge.ovs, full);
      const { bundle } = await diffTo(bridge.dir, after, dumps(bridge.ovs));
      expect(bundle).toBe(golden(`ovs-diff/${name}.ofctl`, bundle));
      if (name === 'unchanged') expect(bundle).toBe('');
      else expect(bundle.split('\n').length).toBeLessThan(full.split('\n').length / 3);
      // stepTo diffs again from the same bridge (the same bundle), applies it and checks it.
      expect(await stepTo(bridge.ovs, bridge.dir, after)).toBe(bundle);
    });
  }
});
