// The pipeline: files -> documents -> schema -> semantic checks -> model -> backend ->
// writer. Returns values; only the CLI touches the process.
import { UserInputError, type Diagnostic } from './diag/diagnostic.js';
import { parseFiles, streamFiles, type InputFile } from './input/source.js';
import { decodeAll, Decoder, type Decoded } from './model/decode.js';
import { buildModel } from './model/build.js';
import type { CompileOptions } from './model/options.js';
import type { FamilyModel } from './model/types.js';
import type { ResolvedVersion } from './model/kube-proxy-version.js';
import { validateObject, validateObjects } from './schema/validate.js';
import { UnreadObjects } from './schema/unread.js';
import { compileFamily, type NftablesOptions } from './backends/nftables/index.js';
import { DEFAULT_LAYOUT, LAYOUTS, layoutSpec, type Layout, type OutputFormat } from './backends/nftables/layout.js';
import { fullReplace } from './nft/transaction.js';
import type { ChunkWriter } from './io/byte-chunks.js';
import { fullReplaceBytes } from './nft/text-writer.js';
import { transactionJson } from './nft/json.js';
import { StatementStore, type RuleStore, type TableContents } from './nft/ruleset.js';
import { ElementBlockTextStore, PrintedStore, TextStore } from './nft/text-table.js';
import { countRuleset } from './nft/stats.js';
import { layoutStats, type LayoutStats } from './nft/stats-report.js';

export interface ModelResult {
  families: FamilyModel[];
  nodeName: string;
  warnings: Diagnostic[];
  /** The kube-proxy release from --kube-proxy-version or the snapshot's Node; none from either. */
  kubeProxyVersion?: ResolvedVersion;
}

interface Loaded {
  parseDiagnostics: Diagnostic[];
  /** Diagnostics of checking and decoding, in that order. */
  diagnostics: Diagnostic[];
  decoded: Decoded;
}

/**
 * Each object read, checked and decoded as soon as its document is read: a parsed value
 * then dies young instead of being copied by every collection until all are decoded.
 * Null when a file turned out to need the full parser part way through.
 */
function loadStreaming(files: InputFile[]): Loaded | null {
  const checked: Diagnostic[] = [];
  const decodedDiags: Diagnostic[] = [];
  const decoder = new Decoder(decodedDiags);
  const unread = new UnreadObjects();
  const parseDiagnostics = streamFiles(files, (o) => {
    const typed = validateObject(o, checked, unread);
    if (typed) decoder.add(typed);
  });
  if (!parseDiagnostics) return null;
  checked.push(...unread.warnings());
  const decoded = decoder.finish();
  return { parseDiagnostics, diagnostics: [...checked, ...decodedDiags], decoded };
}

/** Stage by stage: all objects read, then all checked, then all decoded. */
function loadInStages(files: InputFile[]): Loaded {
  const parsed = parseFiles(files);
  const validated = validateObjects(parsed.objects);
  const diagnostics = validated.diagnostics;
  const decoded = decodeAll(validated.typed, diagnostics);
  return { parseDiagnostics: parsed.diagnostics, diagnostics, decoded };
}

/** Every warning as the error it becomes under --strict. */
function asErrors(ds: Diagnostic[]): Diagnostic[] {
  return ds.map((d) => ({ ...d, severity: 'error' as const }));
}

/**
 * Files to the domain model; throws UserInputError when the input has an error, with
 * every problem found (under --strict its warnings too, as errors). Warnings alone do not
 * stop it, even under --strict: the backends add their own, and a strict run reports
 * them all at once through failOnWarnings, as a run without --strict prints them.
 */
export function loadModel(files: InputFile[], opts: CompileOptions, strict = false): ModelResult {
  // Both ways give the same diagnostics in the same order and the same model.
  const loaded = loadStreaming(files) ?? loadInStages(files);
  const diags: Diagnostic[] = [...loaded.parseDiagnostics, ...loaded.diagnostics];
  // Without a parse, "no node" and the like would only be noise next to the real problem.
  const parseFailed = loaded.parseDiagnostics.some((d) => d.severity === 'error');
  const built = parseFailed ? null : buildModel(loaded.decoded, opts, files, diags);
  const failed = diags.some((d) => d.severity === 'error');
  if (failed || !built) throw new UserInputError(strict ? asErrors(diags) : failed ? diags.filter((d) => d.severity === 'error') : diags);
  return { families: built.families, nodeName: built.nodeName, warnings: diags, kubeProxyVersion: built.kubeProxyVersion };
}

/**
 * --strict: the warnings of the model and of the backends (made once the model is loaded)
 * fail the run together, each shown as the error it has become.
 */
export function failOnWarnings(strict: boolean | undefined, warnings: Diagnostic[]): void {
  if (strict && warnings.length > 0) throw new UserInputError(asErrors(warnings));
}

export interface NftCompileOptions extends CompileOptions {
  tableName?: string;
  format?: OutputFormat;
  strict?: boolean;
  /** The nftables layout; kube-proxy's by default. */
  layout?: Layout;
  /** Make CompileResult.stats: what each layout's ruleset holds and would cost to load. */
  stats?: boolean;
}

/**
 * What a command prints: text, or (large rulesets) a writer that makes the same text as
 * chunks of UTF-8 bytes while it is written out. Every check is done before it runs.
 */
export type Output = string | ChunkWriter;

/** An output as one string, for callers that want the text itself (tests, small rulesets). */
export function outputText(o: Output): string {
  if (typeof o === 'string') return o;
  const chunks: Buffer[] = [];
  o((chunk) => chunks.push(Buffer.from(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

export interface CompileResult {
  output: Output;
  warnings: Diagnostic[];
  /**
   * With the stats option: per layout (the one compiled first), its counts and estimated
   * load. Made when called, so that a caller can write the output first.
   */
  stats?: () => LayoutStats[];
}

/**
 * One table per IP family of the model, its rules kept in a `Store` (compileFamily):
 * StatementStore (JSON output, tracing), TextStore (text output) or PrintedStore (what the
 * diff compares and prints).
 */
export function compileTables<R>(model: ModelResult, opts: NftablesOptions, warnings: Diagnostic[], Store: new () => RuleStore<R>): R[] {
  // The release: the options', else the one the command line or the Node gave, else the newest.
  const withVersion = { ...opts, version: opts.version ?? model.kubeProxyVersion?.version };
  return model.families.map((m) => compileFamily(m, withVersion, warnings, new Store()));
}

/**
 * The tables `compile --format json` loads, rules kept printed, where they are not those of
 * the text form (`text`): fast-load's table-wide affinity set cannot be declared in nft
 * 1.0.6's JSON, so that output keeps kube-proxy's per-endpoint sets (docs/fast-load.md).
 * Null where both forms load the same tables. Warnings are those of the text form's compile.
 */
export function compilePrintedJsonForm(model: ModelResult, tableName: string, layout: Layout | undefined, text: TableContents[]): TableContents[] | null {
  // fast-load's text form has what JSON cannot declare (typeof sets and maps) and 1.36's fixed part.
  if (!layoutSpec(layout).jsonFormDiffers || text.length === 0) return null;
  return compileTables(model, { tableName, layout, format: 'json' }, [], PrintedStore);
}

export function compileNftables(files: InputFile[], opts: NftCompileOptions): CompileResult {
  const model = loadModel(files, opts, opts.strict);
  const warnings = [...model.warnings];
  const tableName = opts.tableName ?? 'kube-proxy';
  // JSON output needs each rule's statements; text output needs only its text.
  if (opts.format === 'json') {
    const tables = compileTables(model, { tableName, layout: opts.layout, format: 'json' }, warnings, StatementStore);
    failOnWarnings(opts.strict, warnings);
    const stats = opts.stats ? () => rulesetStats(model, tableName, 'json', opts.layout ?? DEFAULT_LAYOUT, tables) : undefined;
    return { output: transactionJson(fullReplace(tables)), warnings, stats };
  }
  const Store = layoutSpec(opts.layout).elementBlocks ? ElementBlockTextStore : TextStore;
  const tables = compileTables(model, { tableName, layout: opts.layout }, warnings, Store);
  failOnWarnings(opts.strict, warnings);
  const stats = opts.stats ? () => rulesetStats(model, tableName, 'text', opts.layout ?? DEFAULT_LAYOUT) : undefined;
  return { output: fullReplaceBytes(tables), warnings, stats };
}

/**
 * Each layout's tables for `format`, counted (nft/stats.ts) with their estimated load: the
 * layout compiled first, then the others, compiled again only to be counted, so that the
 * user sees what each would cost before loading either. `compiled` are the compiled
 * layout's tables when they were kept with their statements; else it is compiled again
 * (a text compile keeps only printed lines, which hold no statements to count).
 */
function rulesetStats(model: ModelResult, tableName: string, format: OutputFormat, layout: Layout, compiled?: TableContents[]): LayoutStats[] {
  const order = [layout, ...LAYOUTS.filter((l) => l !== layout)];
  return order.map((l) => {
    const tables = l === layout && compiled ? compiled : compileTables(model, { tableName, layout: l, format }, [], StatementStore);
    return layoutStats(l, l === layout, countRuleset(tables));
  });
}
