// The diff compares the live bridge with the compiled state in the form OVS prints: this
// checks that form on a real Open vSwitch. Every golden bundle is loaded, and the
// canonical printer's line for each compiled flow and group is exactly a line of
// `dump-flows --no-stats` and `dump-groups`, and the other way round.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileOvsProgram } from '../../../src/backends/ovs/index.js';
import { loadModel } from '../../../src/compile.js';
import { canonicalFlowLine, canonicalGroupLine } from '../../../src/ovs/dump-form.js';
import { GOLDEN } from '../../helpers/fixtures.js';
import { ovsCases } from '../../helpers/ovs-cases.js';
import { BRIDGE, ovsForSuite } from '../../helpers/ovs.js';
import { parseArgsToOptions } from '../../helpers/options.js';

/** The lines of a dump that describe flows or groups, without the leading space. */
const entries = (dump: string) =>
  dump
    .split('\n')
    .filter((l) => l.startsWith(' '))
    .map((l) => l.slice(1))
    .sort();

describe('the canonical printer prints what OVS 3.1 dumps', () => {
  const ovs = ovsForSuite();

  for (const c of ovsCases()) {
    it(c.name, () => {
      ovs().loadBundle(fs.readFileSync(path.join(GOLDEN, c.golden), 'utf8'));
      const model = loadModel([{ name: c.file, text: c.text }], parseArgsToOptions(c.args));
      const program = compileOvsProgram(model.families, []);
      const flows = entries(ovs().ofctl(['--no-stats', 'dump-flows', BRIDGE]));
      const groups = entries(ovs().ofctl(['dump-groups', BRIDGE]));
      expect(flows).toEqual(program.flows.map((f) => canonicalFlowLine(f.flow)).sort());
      expect(groups).toEqual(program.groups.map(canonicalGroupLine).sort());
    });
  }
});
