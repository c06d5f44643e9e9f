// Snapshot files to objects, each able to say where any of its fields stands in its file.
// Positions are looked up only when a problem is reported, so a clean compile pays for
// the parse alone.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Document, LineCounter, parseAllDocuments, isNode, isCollection } from 'yaml';
import type { Diagnostic, Position } from '../diag/diagnostic.js';
import { readFastObjects, type SlowReader } from './fast-objects.js';

export type FieldPath = (string | number)[];

export interface SourceObject {
  file: string;
  /** The object as plain data. */
  value: unknown;
  /** Where a field of this object stands; the nearest existing parent when it is missing. */
  locate(field: FieldPath): Position;
  /** Order of the object in the input: file index, document index, item index. */
  order: [number, number, number];
}

export interface InputFile {
  name: string; // as the user named it; "-" is shown as "<stdin>"
  text: string;
}

/** Expands directories (their *.yaml, *.yml, *.json in name order) and reads every file. */
export function readInputs(args: string[], readStdin: () => string): { files: InputFile[]; diagnostics: Diagnostic[] } {
  const files: InputFile[] = [];
  const diagnostics: Diagnostic[] = [];
  const problem = (file: string, message: string) =>
    diagnostics.push({ severity: 'error', pos: { file, line: 1, col: 1 }, message });
  for (const arg of args) {
    if (arg === '-') {
      files.push({ name: '<stdin>', text: readStdin() });
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(arg);
    } catch {
      problem(arg, 'no such file or directory');
      continue;
    }
    if (stat.isDirectory()) {
      const names = fs
        .readdirSync(arg)
        .filter((n) => /\.(ya?ml|json)$/.test(n))
        .sort();
      for (const n of names) {
        const p = path.join(arg, n);
        if (fs.statSync(p).isFile()) files.push({ name: p, text: fs.readFileSync(p, 'utf8') });
      }
      if (names.length === 0) problem(arg, 'directory holds no *.yaml, *.yml or *.json file');
      continue;
    }
    try {
      files.push({ name: arg, text: fs.readFileSync(arg, 'utf8') });
    } catch (e) {
      problem(arg, `cannot read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  }
  return { files, diagnostics };
}

/** Where a field of a parsed document stands (used for any input file with positions). */
export function locator(doc: Document, lines: Pick<LineCounter, 'linePos'>, file: string, base: FieldPath): (field: FieldPath) => Position {
  return (field) => {
    const full = [...base, ...field];
    // Walk down as far as the path exists; report the deepest node found.
    let node: unknown = doc.contents;
    let offset = (doc.contents as { range?: number[] } | null)?.range?.[0] ?? 0;
    for (const key of full) {
      if (!isCollection(node)) break;
      const next = node.get(key, true);
      if (!isNode(next)) {
        break;
      }
      // For a map entry, point at the value; the key's position is found through the pair.
      node = next;
      offset = next.range?.[0] ?? offset;
    }
    const lp = lines.linePos(offset);
    return { file, line: lp.line, col: lp.col };
  };
}

/** Parses every document of every file; YAML and JSON syntax errors become diagnostics. */
export function parseFiles(files: InputFile[], opts: { fast?: boolean } = {}): { objects: SourceObject[]; diagnostics: Diagnostic[] } {
  const objects: SourceObject[] = [];
  const diagnostics: Diagnostic[] = [];
  files.forEach((f, fileIndex) => {
    // Most files are read by the fast path; `fast: false` is for tests that compare both.
    const fast = opts.fast === false ? null : readFastObjects(f, fileIndex, slowReader);
    if (fast) {
      for (const o of fast) objects.push(o);
      return;
    }
    const lines = new LineCounter();
    let docs: Document.Parsed[];
    try {
      docs = parseAllDocuments(f.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true }) as Document.Parsed[];
    } catch (e) {
      diagnostics.push({ severity: 'error', pos: { file: f.name, line: 1, col: 1 }, message: `cannot parse: ${String(e)}` });
      return;
    }
    if (!Array.isArray(docs)) docs = [docs as unknown as Document.Parsed];
    docs.forEach((doc, docIndex) => {
      if (doc.errors.length > 0) {
        for (const err of doc.errors) {
          const lp = lines.linePos(err.pos[0]);
          diagnostics.push({
            severity: 'error',
            pos: { file: f.name, line: lp.line, col: lp.col },
            message: `invalid ${/\.json$/.test(f.name) ? 'JSON' : 'YAML'}: ${firstLine(err.message)}`,
          });
        }
        return;
      }
      const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
      if (value === null || value === undefined) return; // empty document
      const docStart = lines.linePos(doc.contents?.range?.[0] ?? 0);
      if (typeof value !== 'object' || Array.isArray(value)) {
        diagnostics.push({
          severity: 'error',
          pos: { file: f.name, line: docStart.line, col: docStart.col },
          message: 'document is not a Kubernetes object (expected a mapping with apiVersion and kind)',
        });
        return;
      }
      const obj = value as Record<string, unknown>;
      if (obj.kind === 'List' && Array.isArray(obj.items)) {
        obj.items.forEach((item, i) => {
          if (item === null || item === undefined) return;
          objects.push({ file: f.name, value: item, locate: locator(doc, lines, f.name, ['items', i]), order: [fileIndex, docIndex, i] });
        });
        return;
      }
      objects.push({ file: f.name, value, locate: locator(doc, lines, f.name, []), order: [fileIndex, docIndex, 0] });
    });
  });
  return { objects, diagnostics };
}

/** One document read as parseFiles reads it; null when it has any problem to report. */
function slowDocument(text: string): { doc: Document.Parsed; value: unknown } | null {
  const docs = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true }) as Document.Parsed[];
  if (!Array.isArray(docs) || docs.length !== 1 || docs[0].errors.length > 0) return null;
  try {
    return { doc: docs[0], value: docs[0].toJS({ maxAliasCount: 100 }) as unknown };
  } catch {
    return null;
  }
}

const slowReader: SlowReader = { locator, document: slowDocument };

function firstLine(s: string): string {
  return s.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}
