// `kproxc diff --backend ovs --live-flows FLOWS --live-groups GROUPS SNAPSHOT...`: the
// ovs-ofctl bundle that turns the live bridge (what `ovs-ofctl -O OpenFlow15 --no-stats
// dump-flows` and `dump-groups` printed) into what `compile --backend ovs` would load.
import * as fs from 'node:fs';
import { UserInputError } from '../diag/diagnostic.js';
import type { FlowPrinter } from '../backends/ovs/bundle.js';
import { compileOvsValues } from '../backends/ovs/index.js';
import { failOnWarnings, loadModel } from '../compile.js';
import { ovsConntrackScript } from '../conntrack/ovs.js';
import { diffOvs } from '../diff/ovs/diff.js';
import { readFlowDump, readGroupDump } from '../live/ovs/dump-read.js';
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
  const flowsFile = o.liveFlows;
  const groupsFile = o.liveGroups;
  const strict = o.strict;
  const model = loadModel(loadInputs(io, files), o.compile, strict);
  const warnings = [...model.warnings];
  const flowsDump = readDump(io, flowsFile);
  const groupsDump = readDump(io, groupsFile);
  const flows = readFlowDump(flowsDump.text, flowsDump.name);
  const groups = readGroupDump(groupsDump.text, groupsDump.name);
  const compile = (printer: FlowPrinter) => compileOvsValues(model.families, warnings, printer);
  const { lines, notes } = diffOvs(compile, flows, groups, { flows: flowsDump.name, groups: groupsDump.name });
  failOnWarnings(strict, warnings);
  printDiagnostics(io, [...warnings, ...notes]);
  // Computed before anything is written, so that no file is written when it fails.
  const script = o.conntrack === undefined ? undefined : ovsConntrackScript(model, flows, groups);
  emit(io, o.output, lines.length === 0 ? '' : lines.join('\n') + '\n');
  if (o.conntrack !== undefined && script !== undefined) writeAtomically(o.conntrack, script, '--conntrack');
  return o.exitCode && lines.length > 0 ? EXIT_CHANGES : EXIT_OK;
}
