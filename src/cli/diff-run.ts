// The work of `kproxc diff`: the nft transaction that turns the live tables (as
// `nft -j list ruleset` prints them) into what `compile` would load.
import { layoutSpec } from '../backends/nftables/layout.js';
import { InternalError, type Diagnostic } from '../diag/diagnostic.js';
import { compileTables, failOnWarnings, loadModel, type ModelResult } from '../compile.js';
import { conntrackDeletes, conntrackScript } from '../diff/conntrack.js';
import { diffLive } from '../diff/diff.js';
import { readLiveTables, startCompactRead } from '../live/index.js';
import { contentsView } from '../live/view.js';
import type { TableContents } from '../nft/ruleset.js';
import { PrintedStore } from '../nft/text-table.js';
import { transactionText } from '../nft/text.js';
import { emit, EXIT_CHANGES, EXIT_OK, loadInputs, printDiagnostics, stdinText, type ExitCode, type Io } from './io.js';
import { conntrackSnapshot } from './conntrack-snapshot.js';
import type { NftDiffOptions } from './options.js';
import { writeAtomically } from './output.js';

/**
 * The compiled tables, as `compile` builds them (warnings, and --strict, alike): each rule
 * kept as its text, which is what the diff compares and prints.
 */
function desiredTables(io: Io, files: string[], o: NftDiffOptions): { model: ModelResult; tables: TableContents[]; warnings: Diagnostic[] } {
  const strict = o.strict;
  const model = loadModel(loadInputs(io, files), o.compile, strict);
  const warnings = [...model.warnings];
  const tables = compileTables(model, { tableName: o.tableName, layout: o.layout }, warnings, PrintedStore);
  failOnWarnings(strict, warnings);
  return { model, tables, warnings };
}

/**
 * The sets whose live members are read: those the layout's tables manage. The listing is
 * read before the tables are made, so the layout names them; the tables must agree.
 */
function managedSets(o: NftDiffOptions, tables?: TableContents[]): readonly string[] {
  const named = layoutSpec(o.layout).managedSets;
  for (const s of (tables ?? []).flatMap((t) => t.sets)) {
    if (s.managed && !named.includes(s.set.name)) throw new InternalError(`set ${s.set.name} is managed, but layout ${o.layout} does not name it`);
  }
  return named;
}

/** `kproxc diff --backend nftables`. */
export async function runDiff(io: Io, files: string[], o: NftDiffOptions): Promise<ExitCode> {
  const live = o.live;
  // A listing file is read (on a second thread, when large) while the snapshot compiles.
  const pending = live === '-' ? null : startCompactRead(live, o.tableName, managedSets(o));
  let desired: ReturnType<typeof desiredTables>;
  try {
    desired = desiredTables(io, files, o);
  } catch (e) {
    pending?.cancel();
    throw e;
  }
  const { model, tables, warnings } = desired;
  const filter = { tableName: o.tableName, families: tables.map((t) => t.table.family), managedSets: managedSets(o, tables) };
  const liveViews = await readLiveTables({ path: live, pending, stdin: () => stdinText(io) }, filter);
  const { now, later } = diffLive(tables, liveViews, { twoPhase: o.twoPhase !== undefined });
  printDiagnostics(io, warnings);
  emit(io, o.output, transactionText(now));
  if (o.twoPhase !== undefined) writeAtomically(o.twoPhase, transactionText(later));
  // The clean-up is run after the transaction: see docs/diff.md for why in that order.
  if (o.conntrack !== undefined) writeAtomically(o.conntrack, conntrackScript(conntrackDeletes(conntrackSnapshot(model), liveViews, tables.map(contentsView))));
  return o.exitCode && now.length + later.length > 0 ? EXIT_CHANGES : EXIT_OK;
}
