// The ovs diff's input: the compiled program kept in dump form. Given the flows a bridge
// holds, the compile keeps no value of a flow held exactly as compiled; that saves memory
// and nothing else, so the diff must come out the same with and without it. The conntrack
// clean-up reads the same program as the dumps print it, as it reads the compiled values.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileOvsDumpForm, compileOvsProgram } from '../../src/backends/ovs/index.js';
import { loadModel } from '../../src/compile.js';
import { compiledLive, ovsConntrackLive } from '../../src/conntrack/ovs.js';
import { diffOvs } from '../../src/diff/ovs/diff.js';
import { liveBridge, type LiveBridge } from '../../src/diff/ovs/live-bridge.js';
import { readFlowDump, readGroupDump } from '../../src/live/ovs/dump-read.js';
import type { FamilyModel } from '../../src/model/types.js';
import { canonicalActions, canonicalFlowLine, canonicalGroupLine, canonicalMatch } from '../../src/ovs/dump-form.js';
import { opsText } from '../../src/ovs/ops.js';
import { FIXTURES, fixtureText } from '../helpers/fixtures.js';

const SNAPSHOTS = [
  'clusterip.yaml',
  'session-affinity.yaml',
  'dual-stack.yaml',
  'ipv6.yaml',
  'external-policy-local.yaml',
  'loadbalancer-source-ranges.yaml',
  'protocols.yaml',
  'ovs-diff/endpoint-moved.before.yaml',
  'ovs-diff/endpoint-moved.after.yaml',
  'ovs-diff/port-and-policy-changed.after.yaml',
].map((f) => path.join(FIXTURES, f));

function families(file: string): FamilyModel[] {
  return loadModel([{ name: file, text: fixtureText(file) }], {}).families;
}

/** The bridge a fresh load of the snapshot makes, read as the diff reads its dumps. */
function bridgeOf(file: string): LiveBridge {
  const p = compileOvsProgram(families(file), []);
  const flows = p.flows.map((f) => ` ${canonicalFlowLine(f.flow)}\n`).join('');
  const groups = p.groups.map((g) => ` ${canonicalGroupLine(g)}\n`).join('');
  return liveBridge(readFlowDump(flows, 'flows'), readGroupDump(groups, 'groups'), { flows: 'flows', groups: 'groups' });
}

describe('the compiled program in dump form', () => {
  it('gives the diff it gives with every value kept, from every bridge to every snapshot', () => {
    for (const from of SNAPSHOTS) {
      const bridge = bridgeOf(from);
      for (const to of SNAPSHOTS) {
        const held = diffOvs(compileOvsDumpForm(families(to), [], bridge.ours), bridge);
        const all = diffOvs(compileOvsDumpForm(families(to), []), bridge);
        expect(opsText(held.ops), `${from} -> ${to}`).toBe(opsText(all.ops));
        expect(held.notes).toEqual(all.notes);
      }
    }
  });

  it('keeps only the values of flows that learn when the bridge holds every flow as compiled', () => {
    const file = path.join(FIXTURES, 'session-affinity.yaml');
    const p = compileOvsDumpForm(families(file), [], bridgeOf(file).ours);
    let flows = 0;
    const kept: string[] = [];
    p.eachFlow((f) => {
      flows++;
      if (f.flow) kept.push(f.actions);
    });
    expect(flows).toBeGreaterThan(20);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((a) => a.includes('learn('))).toBe(true);
  });

  it('reads for the conntrack clean-up as the compiled values do', () => {
    let udp = 0;
    for (const file of SNAPSHOTS) {
      const values = compileOvsProgram(families(file), []);
      const flows = values.flows.map(({ flow: f }) => ({ table: f.table, match: canonicalMatch(f), actions: canonicalActions(f.actions) }));
      const read = compiledLive(compileOvsDumpForm(families(file), []));
      expect(read, file).toEqual(ovsConntrackLive(flows, values.groups.map((g) => ({ id: g.id, text: canonicalGroupLine(g) }))));
      for (const live of read.values()) udp += live.services.size + live.nodePorts.size;
    }
    expect(udp).toBeGreaterThan(3);
  });
});
