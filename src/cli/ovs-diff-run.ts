// `kproxc diff --backend ovs --live-flows FLOWS --live-groups GROUPS SNAPSHOT...`: the
// ovs-ofctl bundle that turns the live bridge (what `ovs-ofctl -O OpenFlow15 --no-stats
// dump-flows` and `dump-groups` printed) into what `compile --backend ovs` would load.
import * as fs from 'node:fs';
import { UserInputError } from '../diag/diagnostic.js';
import { compileOvsDumpForm } from '../backends/ovs/index.js';
import { failOnWarnings, loadModel } from '../compile.js';
import { ovsConntrackScript } from '../conntrack/ovs.js';
import { diffOvs } from '../diff/ovs/diff.js';
import { liveBridge } from '../diff/ovs/live-bridge.js';
import { readFlowDump, readGroupDump } from '../live/ovs/dump-read.js';
import { opsText } from '../ovs/ops.js';
import { emit, EXIT_CHANGES, EXIT_OK, loadInputs, printDiagnostics, stdinText, type ExitCode, type Io } from './io.js';
import type { OvsDiffOptions } from './options.js';
import { checkOutputFolders, writeAtomically } from './output.js';

/** A dump file's text, or standard input's for `-`; a file that cannot be read is bad input. */
function readDump(io: Io, file: string): { text: string; name: string } {
  if (file === '-') return { text: stdinText(io), name: '<stdin>' };
  try {
    return { text: fs.readFileSync(file, 'utf8'), name: file };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    const message = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : `cannot read: ${code}`;
    throw new UserInputError([{ severity: 'error', pos: { file, line: 1, col: 1 }, message }]);
  }
}

/** Runs the ovs diff; the exit code is 0, or 1 with --exit-code when the bundle is not empty. */
export async function runOvsDiff(io: Io, files: string[], o: OvsDiffOptions): Promise<ExitCode> {
  checkOutputFolders([['-o', o.output], ['--conntrack', o.conntrack]]);
  const strict = o.strict;
  const model = loadModel(loadInputs(io, files), o.compile, strict);
  const warnings = [...model.warnings];
  const flowsDump = readDump(io, o.liveFlows);
  const groupsDump = readDump(io, o.liveGroups);
  const flows = readFlowDump(flowsDump.text, flowsDump.name);
  const groups = readGroupDump(groupsDump.text, groupsDump.name);
  const bridge = liveBridge(flows, groups, { flows: flowsDump.name, groups: groupsDump.name });
  // Compiled once, for the diff and the clean-up; told what the bridge holds, it keeps no
  // value of a flow held as compiled (the diff prints only the others).
  const compiled = compileOvsDumpForm(model.families, warnings, bridge.ours);
  const { ops, notes } = diffOvs(compiled, bridge);
  failOnWarnings(strict, warnings);
  printDiagnostics(io, [...warnings, ...notes]);
  // Computed before anything is written, so that no file is written when it fails.
  const script = o.conntrack === undefined ? undefined : ovsConntrackScript(model, compiled, flows, groups);
  emit(io, o.output, opsText(ops));
  if (o.conntrack !== undefined && script !== undefined) writeAtomically(o.conntrack, script, '--conntrack');
  return o.exitCode && ops.length > 0 ? EXIT_CHANGES : EXIT_OK;
}
