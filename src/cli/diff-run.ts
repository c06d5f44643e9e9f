// The work of `kproxc diff`: the nft transaction that turns the live tables (as
// `nft -j list ruleset` prints them) into what `compile` would load.
import { layoutSpec } from '../backends/nftables/layout.js';
import { InternalError, type Diagnostic } from '../diag/diagnostic.js';
import { compilePrintedJsonForm, compileTables, failOnWarnings, loadModel, type ModelResult } from '../compile.js';
import { nftConntrackScript } from '../conntrack/nft.js';
import { diffLive, type DiffResult } from '../diff/diff.js';
import { readLiveTables, startCompactRead } from '../live/index.js';
import type { LiveTableView } from '../live/view.js';
import type { TableContents } from '../nft/ruleset.js';
import { PrintedStore } from '../nft/text-table.js';
import { transactionText } from '../nft/text.js';
import { emit, EXIT_CHANGES, EXIT_OK, loadInputs, printDiagnostics, stdinText, type ExitCode, type Io } from './io.js';
import type { NftDiffOptions } from './options.js';
import { checkOutputFolders, writeAtomically } from './output.js';

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
  checkOutputFolders([['-o', o.output], ['--two-phase', o.twoPhase], ['--conntrack', o.conntrack]]);
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
  const { model, warnings } = desired;
  const filter = { tableName: o.tableName, families: desired.tables.map((t) => t.table.family), managedSets: managedSets(o, desired.tables) };
  const liveViews = await readLiveTables({ path: live, pending, stdin: () => stdinText(io) }, filter);
  const { tables, now, later } = transaction(model, desired.tables, liveViews, o);
  printDiagnostics(io, warnings);
  emit(io, o.output, transactionText(now));
  if (o.twoPhase !== undefined) writeAtomically(o.twoPhase, transactionText(later), '--two-phase');
  // The clean-up is run after the transaction: see docs/diff.md for why in that order.
  if (o.conntrack !== undefined) writeAtomically(o.conntrack, nftConntrackScript(model, liveViews, tables), '--conntrack');
  return o.exitCode && now.length + later.length > 0 ? EXIT_CHANGES : EXIT_OK;
}

const isEmpty = (r: DiffResult) => r.now.length + r.later.length === 0;

/**
 * The transaction to the text form's tables, and those tables; or nothing, when the live
 * tables are exactly what `compile --format json` loads where that is another table (fast-load
 * with affinity). A table loaded from either output is up to date; any change moves it to
 * the text form, since the transaction is text. The JSON form is compiled only when the
 * text form's transaction is not empty and a live table lacks one of the text form's sets
 * (the JSON form lacks the table-wide affinity set).
 */
function transaction(model: ModelResult, text: TableContents[], live: LiveTableView[], o: NftDiffOptions): DiffResult & { tables: TableContents[] } {
  const opts = { twoPhase: o.twoPhase !== undefined };
  const toText = diffLive(text, live, opts);
  if (isEmpty(toText) || !live.some((l) => lacksSetsOf(l, text))) return { tables: text, ...toText };
  const json = compilePrintedJsonForm(model, o.tableName, o.layout, text);
  const toJson = json && diffLive(json, live, opts);
  return json && toJson && isEmpty(toJson) ? { tables: json, ...toJson } : { tables: text, ...toText };
}

/** Whether a live table lacks a set that the wanted table of its family has. */
function lacksSetsOf(l: LiveTableView, wanted: TableContents[]): boolean {
  const w = wanted.find((t) => t.table.family === l.table.family);
  if (w === undefined) return false;
  const names = new Set(l.sets.map((s) => s.set.name));
  return w.sets.some((s) => !names.has(s.set.name));
}
