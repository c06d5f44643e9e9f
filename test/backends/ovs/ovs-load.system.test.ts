// System test on a real Open vSwitch (private daemons, dummy datapath): every golden bundle
// loads as one transaction, loading it again gives the same flows and groups, and OVS holds
// exactly the flows and buckets the bundle lists (none merged away, none missing).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GOLDEN } from '../../helpers/fixtures.js';
import { ovsCases } from '../../helpers/ovs-cases.js';
import { ovsForSuite } from '../../helpers/ovs.js';

function bucketsPerGroup(bundle: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of bundle.split('\n').filter((l) => l.startsWith('group add') || l.startsWith('group insert_bucket'))) {
    const id = /group_id=(\d+)/.exec(line)![1];
    out.set(id, (out.get(id) ?? 0) + (line.match(/bucket=/g) ?? []).length);
  }
  return out;
}

describe('golden bundles load into a real Open vSwitch', () => {
  const ovs = ovsForSuite();

  for (const c of ovsCases()) {
    it(c.name, () => {
      const bundle = fs.readFileSync(path.join(GOLDEN, c.golden), 'utf8');
      ovs().loadBundle(bundle);
      const first = ovs().dump();
      ovs().loadBundle(bundle);
      const second = ovs().dump();
      expect(second).toEqual(first);

      expect(first.flows.length).toBe(bundle.split('\n').filter((l) => l.startsWith('flow add')).length);
      const dumped = new Map(first.groups.map((g) => [/group_id=(\d+)/.exec(g)![1], (g.match(/bucket=/g) ?? []).length]));
      expect(dumped).toEqual(bucketsPerGroup(bundle));
      expect(first.flows.every((f) => /^cookie=0x103/.test(f))).toBe(true);
    });
  }

  it('a bundle with one bad line changes nothing', () => {
    const good = fs.readFileSync(path.join(GOLDEN, 'clusterip.ovs'), 'utf8');
    ovs().loadBundle(good);
    const before = ovs().dump();
    const bad = fs.readFileSync(path.join(GOLDEN, 'ovs/dual-stack-node.ovs'), 'utf8') + 'flow add table=15,priority=1,tcp actions=group:999999\n';
    expect(() => ovs().loadBundle(bad)).toThrow();
    expect(ovs().dump()).toEqual(before);
  });
});
