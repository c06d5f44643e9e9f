// The work of `kproxc diff` (diff-command.ts reads its options): the nft transaction that
// turns the live tables (as `nft -j list ruleset` prints them) into what `compile` would load.
import { UsageError, UserInputError, type Diagnostic } from '../diag/diagnostic.js';
import type { Layout } from '../backends/nftables/layout.js';
import { compilePrintedTables, failOnWarnings, loadModel } from '../compile.js';
import { fileChunks } from '../input/chunks.js';
import { diffLive } from '../nft/diff.js';
import { readLive } from '../nft/live.js';
import { compactView } from '../nft/live-compact.js';
import { readCompactText, startCompactRead, type PendingRead } from '../nft/live-read.js';
import { contentsView, type LiveTableView } from '../nft/live-view.js';
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
  const tables = compilePrintedTables(model, o.table as string, warnings, o.layout as Layout);
  failOnWarnings(strict, warnings);
  return { tables, warnings };
}

/**
 * The live tables the diff needs. The compact read (started before the snapshot was
 * compiled, for a file) serves unless the listing has a problem in those tables or is not
 * plain `nft -j` output: then it is read the long way, which reports problems with their
 * positions, exactly as it always has.
 */
async function liveTables(io: Io, live: string, pending: PendingRead | null, tables: TableContents[], tableName: string): Promise<LiveTableView[]> {
  const families = tables.map((t) => t.table.family);
  const stdin = live === '-' ? io.readStdin() : '';
  const read = pending ? await pending.result() : readCompactText(stdin, tableName);
  const relevant = read.problemsIn.some((p) => p === 'any' || families.includes(p));
  if (read.readable && !relevant) return read.tables.filter((t) => families.includes(t.table.family)).map(compactView);
  const name = live === '-' ? '<stdin>' : live;
  const filter = { tableName, families };
  try {
    return readLive(live === '-' ? [stdin] : (pending?.again?.() ?? fileChunks(live)), name, filter).map(contentsView);
  } catch (e) {
    // A file that cannot be opened or read (missing, a directory, no permission).
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code !== 'string') throw e;
    const message = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : `cannot read: ${code}`;
    throw new UserInputError([{ severity: 'error', pos: { file: name, line: 1, col: 1 }, message }]);
  }
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
  const liveViews = await liveTables(io, live, pending, tables, o.table as string);
  const { now, later } = diffLive(tables, liveViews, { twoPhase: o.twoPhase !== undefined });
  printDiagnostics(io, warnings);
  emit(io, o.output as string | undefined, transactionText(now));
  if (o.twoPhase !== undefined) writeAtomically(o.twoPhase as string, transactionText(later));
  if (o.exitCode === true) commandRegistry.lastExitCode = now.length + later.length > 0 ? EXIT_CHANGES : EXIT_OK;
}
