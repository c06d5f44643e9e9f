// The pipeline: files -> documents -> schema -> semantic checks -> model -> backend ->
// writer. Returns values; only the CLI touches the process.
import { UserInputError, type Diagnostic } from './diag/diagnostic.js';
import { parseFiles, type InputFile } from './input/source.js';
import { decodeAll } from './model/decode.js';
import { buildModel } from './model/build.js';
import type { CompileOptions } from './model/options.js';
import type { FamilyModel } from './model/types.js';
import { validateObjects } from './schema/validate.js';
import { compileFamilyTable, compileFamilyTableText } from './backends/nftables/index.js';
import { fullReplace } from './nft/transaction.js';
import { fullReplaceBytes, type ChunkWriter } from './nft/text-writer.js';
import { transactionJson } from './nft/json.js';
import type { TableContents } from './nft/ruleset.js';

export interface ModelResult {
  families: FamilyModel[];
  nodeName: string;
  warnings: Diagnostic[];
}

/** Files to the domain model; throws UserInputError with every problem found. */
export function loadModel(files: InputFile[], opts: CompileOptions, strict = false): ModelResult {
  const diags: Diagnostic[] = [];
  const parsed = parseFiles(files);
  diags.push(...parsed.diagnostics);
  const validated = validateObjects(parsed.objects);
  diags.push(...validated.diagnostics);
  const decoded = decodeAll(validated.typed, diags);
  // Without a parse, "no node" and the like would only be noise next to the real problem.
  const parseFailed = parsed.diagnostics.some((d) => d.severity === 'error');
  const built = parseFailed ? null : buildModel(decoded, opts, files, diags);
  // --strict: every warning fails the run, and is shown as the error it has become.
  const errors = diags.filter((d) => d.severity === 'error' || strict).map((d) => ({ ...d, severity: 'error' as const }));
  if (errors.length > 0 || !built) throw new UserInputError(errors.length ? errors : diags);
  return { families: built.families, nodeName: built.nodeName, warnings: diags };
}

export interface NftCompileOptions extends CompileOptions {
  tableName?: string;
  format?: 'text' | 'json';
  strict?: boolean;
}

/**
 * What a command prints: text, or (large rulesets) a writer that makes the same text as
 * chunks of UTF-8 bytes while it is written out. Every check is done before it runs.
 */
export type Output = string | ChunkWriter;

export interface CompileResult {
  output: Output;
  warnings: Diagnostic[];
}

/** One table per IP family, with every rule's statements. */
export function compileTables(model: ModelResult, tableName: string, warnings: Diagnostic[]): TableContents[] {
  return model.families.map((m) => compileFamilyTable(m, { tableName }, warnings));
}

export function compileNftables(files: InputFile[], opts: NftCompileOptions): CompileResult {
  const model = loadModel(files, opts, opts.strict);
  const warnings = [...model.warnings];
  const tableName = opts.tableName ?? 'kube-proxy';
  const failOnWarnings = () => {
    if (opts.strict && warnings.length > 0) throw new UserInputError(warnings.map((w) => ({ ...w, severity: 'error' })));
  };
  // JSON output needs each rule's statements; text output needs only its text.
  if (opts.format === 'json') {
    const tables = compileTables(model, tableName, warnings);
    failOnWarnings();
    return { output: transactionJson(fullReplace(tables)), warnings };
  }
  const tables = model.families.map((m) => compileFamilyTableText(m, { tableName }, warnings));
  failOnWarnings();
  return { output: fullReplaceBytes(tables), warnings };
}
