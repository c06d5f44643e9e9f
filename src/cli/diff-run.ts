// The work of `kproxc diff` (diff-command.ts reads its options): the nft transaction that
// turns the live tables (as `nft -j list ruleset` prints them) into what `compile` would load.
import { UsageError, type Diagnostic } from '../diag/diagnostic.js';
import { compilePrintedTables, failOnWarnings, loadModel } from '../compile.js';
import { diffLive } from '../diff/diff.js';
import { readLiveTables, startCompactRead } from '../live/index.js';
import type { TableContents } from '../nft/ruleset.js';
import { transactionText } from '../nft/text.js';
import { compileOptionsFrom, emit, EXIT_CHANGES, EXIT_OK, loadInputs, printDiagnostics, type Io } from './main.js';
import { writeAtomically } from './output.js';
import { commandRegistry } from './registry.js';

/**
 * The compiled tables, as `compile` builds them (warnings, and --strict, alike): each rule
 * kept as its text, which is what the diff compares and prints.
 */
function desiredTables(io: Io, files: string[], o: Record<string, unknown>): { tables: TableContents[]; warnings: Diagnostic[] } {
  const strict = o.strict === true;
  const model = loadModel(loadInputs(io, files), compileOptionsFrom(o), strict);
  const warnings = [...model.warnings];
  const tables = compilePrintedTables(model, o.table as string, warnings);
  failOnWarnings(strict, warnings);
  return { tables, warnings };
}

/** `kproxc diff`, once its options are read. */
export async function runDiff(io: Io, files: string[], o: Record<string, unknown>): Promise<void> {
  const live = o.live as string;
  if (live === '-' && files.includes('-')) throw new UsageError('--live - and a snapshot from standard input cannot both read standard input');
  // A listing file is read (on a second thread, when large) while the snapshot compiles.
  const pending = live === '-' ? null : startCompactRead(live, o.table as string);
  let desired: ReturnType<typeof desiredTables>;
  try {
    desired = desiredTables(io, files, o);
  } catch (e) {
    pending?.cancel();
    throw e;
  }
  const { tables, warnings } = desired;
  const liveViews = await readLiveTables({ path: live, pending, stdin: () => io.readStdin() }, { tableName: o.table as string, families: tables.map((t) => t.table.family) });
  const { now, later } = diffLive(tables, liveViews, { twoPhase: o.twoPhase !== undefined });
  printDiagnostics(io, warnings);
  emit(io, o.output as string | undefined, transactionText(now));
  if (o.twoPhase !== undefined) writeAtomically(o.twoPhase as string, transactionText(later));
  if (o.exitCode === true) commandRegistry.lastExitCode = now.length + later.length > 0 ? EXIT_CHANGES : EXIT_OK;
}
