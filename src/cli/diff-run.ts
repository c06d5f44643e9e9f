// The work of `kproxc diff`: the nft transaction that turns the live tables (as
// `nft -j list ruleset` prints them) into what `compile` would load.
import { layoutSpec } from '../backends/nftables/layout.js';
import { InternalError, type Diagnostic } from '../diag/diagnostic.js';
import { compilePrintedJsonForm, compileTables, failOnWarnings, loadModel, type ModelResult } from '../compile.js';
import { nftConntrackScript } from '../conntrack/nft.js';
import { diffLive, type DiffResult } from '../diff/diff.js';
import { readLiveTables, startCompactRead } from '../live/index.js';
import { ruleText, type LiveTableView } from '../live/view.js';
import { detectVersion, type TableShape } from '../backends/nftables/versions.js';
import { NEWEST_KUBE_PROXY, type KubeProxyVersion } from '../model/kube-proxy-version.js';
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
function compileDesired(model: ModelResult, o: NftDiffOptions, version: KubeProxyVersion): { tables: TableContents[]; warnings: Diagnostic[] } {
  const warnings = [...model.warnings];
  const tables = compileTables(model, { tableName: o.tableName, layout: o.layout, version }, warnings, PrintedStore);
  failOnWarnings(o.strict, warnings);
  return { tables, warnings };
}

/** What telling its release needs of a live table: its chain and set names, and a chain's rules as text. */
function shapeOf(view: LiveTableView): TableShape {
  const chainNames = Array.from({ length: view.chainCount }, (_, i) => view.chainName(i));
  let index: Map<string, number> | undefined;
  return {
    chainNames,
    setNames: view.sets.map((s) => s.set.name),
    ruleTexts(chain) {
      const i = (index ??= new Map(chainNames.map((n, k) => [n, k]))).get(chain);
      return i === undefined ? [] : view.rules(i).map(ruleText);
    },
  };
}

/**
 * The release to compile for when neither --kube-proxy-version nor the snapshot's Node
 * gives one: the live table's, as its shape tells it (said on standard error).
 */
function liveVersion(io: Io, liveViews: LiveTableView[]): KubeProxyVersion {
  const found = detectVersion(liveViews.map(shapeOf));
  io.stderr(`kproxc: kube-proxy ${found.version}, read from the live table (${found.why}); --kube-proxy-version or the Node's version chooses another\n`);
  return found.version;
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
  // A listing file is read (on a second thread, when large) while the snapshot compiles; a
  // listing on standard input is read after it, so that with `nft -j list ruleset | kproxc
  // diff --live - ...` the compile runs while nft is still listing.
  const pending = live === '-' ? null : startCompactRead(live, o.tableName, managedSets(o));
  let model: ModelResult;
  let compiled: ReturnType<typeof compileDesired> | undefined;
  try {
    model = loadModel(loadInputs(io, files), o.compile, o.strict);
    // With the release known (or a layout that is the same in every release), the tables
    // are made before the listing is read.
    const release = model.kubeProxyVersion?.version ?? (layoutSpec(o.layout).followsRelease ? undefined : NEWEST_KUBE_PROXY);
    if (release) compiled = compileDesired(model, o, release);
  } catch (e) {
    pending?.cancel();
    throw e;
  }
  const filter = { tableName: o.tableName, families: model.families.map((m) => (m.family === 4 ? ('ip' as const) : ('ip6' as const))), managedSets: managedSets(o) };
  const liveViews = await readLiveTables({ path: live, pending, stdin: () => stdinText(io) }, filter);
  // A layout whose table is the same in every release needs no release read.
  compiled ??= compileDesired(model, o, layoutSpec(o.layout).followsRelease ? liveVersion(io, liveViews) : NEWEST_KUBE_PROXY);
  const { warnings } = compiled;
  managedSets(o, compiled.tables);
  const { tables, now, later } = transaction(model, compiled.tables, liveViews, o);
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
 * tables are exactly what `compile --format json` loads where that is another table (fast-load:
 * its text form has endpoint maps, typeof sets and 1.36's fixed part). A table loaded from either output is up to date; any change moves it to
 * the text form, since the transaction is text. The JSON form is compiled only when the
 * text form's transaction is not empty and a live table lacks one of the text form's sets
 * (the JSON form lacks the endpoint maps, the hairpin set and the table-wide affinity set).
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
