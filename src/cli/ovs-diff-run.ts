// `kproxc diff --backend ovs --live-flows FLOWS --live-groups GROUPS SNAPSHOT...`: the
// ovs-ofctl bundle that turns the live bridge (what `ovs-ofctl -O OpenFlow15 --no-stats
// dump-flows` and `dump-groups` printed) into what `compile --backend ovs` would load.
import * as fs from 'node:fs';
import { UsageError, UserInputError } from '../diag/diagnostic.js';
import type { FlowPrinter } from '../backends/ovs/bundle.js';
import { compileOvsValues } from '../backends/ovs/index.js';
import { failOnWarnings, loadModel } from '../compile.js';
import { diffOvs } from '../diff/ovs/diff.js';
import { readFlowDump, readGroupDump } from '../live/ovs/dump-read.js';
import { compileOptionsFrom, emit, EXIT_CHANGES, EXIT_OK, loadInputs, printDiagnostics, type Io } from './main.js';

/** A dump file's text, or standard input's for `-`; a file that cannot be read is bad input. */
function readDump(io: Io, file: string): { text: string; name: string } {
  if (file === '-') return { text: io.readStdin(), name: '<stdin>' };
  try {
    return { text: fs.readFileSync(file, 'utf8'), name: file };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    const message = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : `cannot read: ${code}`;
    throw new UserInputError([{ severity: 'error', pos: { file, line: 1, col: 1 }, message }]);
  }
}

/** Runs the ovs diff; the exit code is 0, or 1 with --exit-code when the bundle is not empty. */
export async function runOvsDiff(io: Io, files: string[], o: Record<string, unknown>): Promise<number> {
  const flowsFile = o.liveFlows as string | undefined;
  const groupsFile = o.liveGroups as string | undefined;
  if (!flowsFile || !groupsFile) throw new UsageError('--backend ovs needs --live-flows FILE and --live-groups FILE (what ovs-ofctl dump-flows and dump-groups printed)');
  if (o.live !== undefined) throw new UsageError('--live is the nftables listing; with --backend ovs give --live-flows and --live-groups');
  if (o.twoPhase !== undefined) throw new UsageError('--two-phase does not apply to --backend ovs');
  const stdin = [flowsFile, groupsFile, ...files].filter((f) => f === '-').length;
  if (stdin > 1) throw new UsageError('only one of --live-flows, --live-groups and the snapshot can read standard input');
  const strict = o.strict === true;
  const model = loadModel(loadInputs(io, files), compileOptionsFrom(o), strict);
  const warnings = [...model.warnings];
  const flowsDump = readDump(io, flowsFile);
  const groupsDump = readDump(io, groupsFile);
  const flows = readFlowDump(flowsDump.text, flowsDump.name);
  const groups = readGroupDump(groupsDump.text, groupsDump.name);
  const compile = (printer: FlowPrinter) => compileOvsValues(model.families, warnings, printer);
  const { lines, notes } = diffOvs(compile, flows, groups, { flows: flowsDump.name, groups: groupsDump.name });
  failOnWarnings(strict, warnings);
  printDiagnostics(io, [...warnings, ...notes]);
  emit(io, o.output as string | undefined, lines.length === 0 ? '' : lines.join('\n') + '\n');
  return o.exitCode === true && lines.length > 0 ? EXIT_CHANGES : EXIT_OK;
}
