// Snapshot files to objects, each able to say where any of its fields stands in its file.
// Positions are looked up only when a problem is reported, so a clean compile pays for
// the parse alone.
//
// The input is untrusted: every way a file can fail to be a snapshot (unreadable, bad
// syntax, nesting deep enough to exhaust the stack, alias bombs and cycles) ends here as
// a positioned diagnostic, never as an exception.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Document, LineCounter, Node } from 'yaml';
import { yaml } from './yaml-lib.js';
import type { Diagnostic, Position } from '../diag/diagnostic.js';
import { nestingProblem, valueShapeProblem, MAX_NESTING } from './shape.js';
import { eachFastObject, readFastObjects, type SlowReader } from './fast-objects.js';

export type FieldPath = (string | number)[];

export interface LocateOptions {
  /** Point at the key of the last map entry of the path instead of its value. */
  key?: boolean;
}

export interface SourceObject {
  file: string;
  /** The object as plain data. */
  value: unknown;
  /**
   * Where a field of this object stands: its value's first character (the opening quote
   * of a quoted scalar, the bracket of a flow collection), or its key when the value is
   * empty or `key` is asked for; the nearest existing parent when the field is missing.
   */
  locate(field: FieldPath, opts?: LocateOptions): Position;
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
  const errno = (e: unknown) => (e as NodeJS.ErrnoException).code ?? 'error';
  const readFile = (p: string) => {
    try {
      files.push({ name: p, text: fs.readFileSync(p, 'utf8') });
    } catch (e) {
      problem(p, `cannot read: ${errno(e)}`);
    }
  };
  for (const arg of args) {
    if (arg === '-') {
      try {
        files.push({ name: '<stdin>', text: readStdin() });
      } catch (e) {
        problem('<stdin>', `cannot read: ${errno(e)}`);
      }
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(arg);
    } catch (e) {
      problem(arg, errno(e) === 'ENOENT' ? 'no such file or directory' : `cannot read: ${errno(e)}`);
      continue;
    }
    if (!stat.isDirectory()) {
      readFile(arg);
      continue;
    }
    let names: string[];
    try {
      names = fs
        .readdirSync(arg)
        .filter((n) => /\.(ya?ml|json)$/.test(n))
        .sort();
    } catch (e) {
      problem(arg, `cannot read directory: ${errno(e)}`);
      continue;
    }
    let found = 0;
    const before = diagnostics.length;
    for (const n of names) {
      const p = path.join(arg, n);
      let isFile = false;
      try {
        isFile = fs.statSync(p).isFile();
      } catch (e) {
        problem(p, `cannot read: ${errno(e)}`);
      }
      if (isFile) {
        found++;
        readFile(p);
      }
    }
    if (found === 0 && diagnostics.length === before) problem(arg, 'directory holds no *.yaml, *.yml or *.json file');
  }
  return { files, diagnostics };
}

/** The node at a path, resolving aliases (a problem inside an aliased value is in its anchor's text). */
function step(doc: Document, node: unknown, key: string | number): { pairKey?: Node; value?: Node } | null {
  const { isAlias, isSeq, isNode, isMap, isScalar } = yaml();
  const target = isAlias(node) ? node.resolve(doc) : node;
  if (isSeq(target)) {
    if (typeof key !== 'number') return null;
    const item = target.items[key];
    return isNode(item) ? { value: item } : null;
  }
  if (isMap(target)) {
    for (const pair of target.items) {
      if (isScalar(pair.key) && String(pair.key.value) === String(key)) {
        return { pairKey: pair.key, value: isNode(pair.value) ? pair.value : undefined };
      }
    }
  }
  return null;
}

/** Where a field of a parsed document stands (used for any input file with positions). */
export function locator(doc: Document, lines: Pick<LineCounter, 'linePos'>, file: string, base: FieldPath): SourceObject['locate'] {
  return (field, opts = {}) => {
    const full = [...base, ...field];
    let node: unknown = doc.contents;
    let offset = doc.contents?.range?.[0] ?? 0;
    for (let i = 0; i < full.length; i++) {
      const found = step(doc, node, full[i]);
      if (!found) break;
      const last = i === full.length - 1;
      const valueRange = found.value?.range;
      const emptyValue = !valueRange || valueRange[0] === valueRange[1];
      if (found.pairKey?.range && (emptyValue || (last && opts.key))) {
        offset = found.pairKey.range[0];
        if (emptyValue) break;
      } else if (valueRange) offset = valueRange[0];
      node = found.value;
    }
    const lp = lines.linePos(offset);
    return { file, line: lp.line, col: lp.col };
  };
}

/**
 * The first structure that has no JSON form: an alias without an anchor, an alias inside
 * its own anchor (a cycle), or a collection used as a mapping key (Kubernetes objects have
 * string keys).
 */
function badStructure(doc: Document): { offset: number; message: string } | null {
  const { visit, isAlias, isMap, isSeq } = yaml();
  let bad: { offset: number; message: string } | null = null;
  visit(doc, {
    Alias(_key, node, ancestors) {
      const target = node.resolve(doc);
      const offset = node.range?.[0] ?? 0;
      if (!target) bad = { offset, message: `alias *${node.source} has no anchor &${node.source} before it` };
      else if (ancestors.includes(target as never)) bad = { offset, message: `alias *${node.source} stands inside its own anchor (a cycle)` };
      return bad ? visit.BREAK : undefined;
    },
    Pair(_key, pair) {
      const key = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
      if (isMap(key) || isSeq(key)) {
        bad = { offset: (pair.key as Node).range?.[0] ?? 0, message: 'a mapping key must be a scalar, not a collection' };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return bad;
}

/**
 * A .json file is held to JSON itself (YAML would take trailing commas and comments), and
 * JSON's own message names the problem better than YAML's. V8 parses JSON without
 * recursion, and nesting was bounded before this anyway.
 */
function jsonSyntaxProblem(text: string): { offset: number; message: string } | null {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    const raw = String((e as Error)?.message ?? e);
    const at = / in JSON at position (\d+)/.exec(raw);
    const offset = at ? Number(at[1]) : /end of JSON/.test(raw) ? text.length : 0;
    // Drop the position (given as line and column instead) and any quoted copy of the input.
    const message = raw.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*$/s, '');
    return { offset, message };
  }
}

/** Kubernetes reads a null field as an absent one (Go's decoding), so nulls in mappings are dropped. */
function dropNulls(root: unknown): void {
  // Iterative; a value shared through aliases is walked again, which the alias limit bounds.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x); // no spread: lists may be long
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      if (o[k] === null) delete o[k];
      else if (typeof o[k] === 'object') stack.push(o[k]);
    }
  }
}

type At = (offset: number, message: string) => void;

/** The documents of one file, or null when its text is not YAML (or JSON) at all. */
function composeDocuments(f: InputFile, lines: LineCounter, syntax: string, at: At): Document.Parsed[] | null {
  try {
    const json = syntax === 'JSON' ? jsonSyntaxProblem(f.text) : null;
    if (json) {
      // Nothing is parsed yet, so the line counter knows no lines: count them up to the offset.
      lines.addNewLine(0);
      for (let i = f.text.indexOf('\n'); i !== -1 && i < json.offset; i = f.text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
      at(json.offset, `invalid JSON: ${json.message}`);
      return null;
    }
    // The parser is iterative; composing is recursive, so each document's nesting is
    // bounded before it is composed. Documents stream through, never all tokens at once.
    const composer = new (yaml().Composer)({ uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
    const docs: Document.Parsed[] = [];
    for (const token of new (yaml().Parser)(lines.addNewLine).parse(f.text)) {
      const deep = nestingProblem([token]);
      if (deep !== null) {
        at(deep, `invalid ${syntax}: nested more than ${MAX_NESTING} levels deep`);
        return null;
      }
      for (const doc of composer.next(token)) docs.push(doc as Document.Parsed);
    }
    for (const doc of composer.end(false, f.text.length)) docs.push(doc as Document.Parsed);
    return docs;
  } catch (e) {
    at(0, `invalid ${syntax}: ${firstLine(String((e as Error)?.message ?? e))}`);
    return null;
  }
}

/** A document as plain data (null for an empty one), or undefined when it has no JSON form. */
function documentValue(doc: Document.Parsed, syntax: string, at: At): unknown {
  if (doc.errors.length > 0) {
    for (const err of doc.errors) at(err.pos[0], `invalid ${syntax}: ${firstLine(err.message)}`);
    return undefined;
  }
  const docStart = doc.contents?.range?.[0] ?? doc.range?.[0] ?? 0;
  const structure = badStructure(doc);
  if (structure) {
    at(structure.offset, `invalid ${syntax}: ${structure.message}`);
    return undefined;
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    at(docStart, `invalid ${syntax}: ${firstLine(String((e as Error)?.message ?? e))}`);
    return undefined;
  }
  const shape = valueShapeProblem(value);
  if (shape) {
    at(docStart, `invalid ${syntax}: ${shape}`);
    return undefined;
  }
  if (value === undefined) return null;
  dropNulls(value);
  return value;
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
    parseFull(f, fileIndex, objects, diagnostics);
  });
  return { objects, diagnostics };
}

/**
 * parseFiles, handing each object to `each` as soon as its document is read, so that a
 * caller done with a value lets the value die young. Returns the diagnostics, or null when
 * a file turned out part way through to need the full parser: the objects handed over are
 * then not all of the file's, and the caller must start again with parseFiles.
 */
export function streamFiles(files: InputFile[], each: (o: SourceObject) => void): Diagnostic[] | null {
  const diagnostics: Diagnostic[] = [];
  for (let fileIndex = 0; fileIndex < files.length; fileIndex++) {
    const f = files[fileIndex];
    let handed = 0;
    const fast = eachFastObject(f, fileIndex, slowReader, (o) => {
      handed++;
      each(o);
    });
    if (fast) continue;
    if (handed > 0) return null;
    const objects: SourceObject[] = [];
    parseFull(f, fileIndex, objects, diagnostics);
    for (const o of objects) each(o);
  }
  return diagnostics;
}

/** A file read by the full parser, with positions for everything. */
function parseFull(f: InputFile, fileIndex: number, objects: SourceObject[], diagnostics: Diagnostic[]): void {
  const lines = new (yaml().LineCounter)();
  const at: At = (offset, message) => {
    const lp = lines.linePos(offset);
    diagnostics.push({ severity: 'error', pos: { file: f.name, line: lp.line, col: lp.col }, message });
  };
  const syntax = /\.json$/.test(f.name) ? 'JSON' : 'YAML';
  const docs = composeDocuments(f, lines, syntax, at) ?? [];
  docs.forEach((doc, docIndex) => {
    const value = documentValue(doc, syntax, at);
    if (value === undefined || value === null) return; // reported, or an empty document
    const locate = (base: FieldPath) => locator(doc, lines, f.name, base);
    if (typeof value !== 'object' || Array.isArray(value)) {
      at(doc.contents?.range?.[0] ?? 0, 'document is not a Kubernetes object (expected a mapping with apiVersion and kind)');
      return;
    }
    const obj = value as Record<string, unknown>;
    if (obj.kind !== 'List') {
      objects.push({ file: f.name, value, locate: locate([]), order: [fileIndex, docIndex, 0] });
    } else if (obj.items !== undefined && !Array.isArray(obj.items)) {
      diagnostics.push({ severity: 'error', pos: locate([])(['items']), kind: 'List', field: 'items', message: 'must be a list of objects' });
    } else {
      ((obj.items ?? []) as unknown[]).forEach((item, i) => {
        if (item !== null && item !== undefined) objects.push({ file: f.name, value: item, locate: locate(['items', i]), order: [fileIndex, docIndex, i] });
      });
    }
  });
}

/** One YAML document's text read as parseFiles reads it; null when it has any problem to report. */
function slowDocument(text: string, file: string): { doc: Document.Parsed; value: unknown } | null {
  let failed = false;
  const at: At = () => {
    failed = true;
  };
  const docs = composeDocuments({ name: file, text }, new (yaml().LineCounter)(), 'YAML', at);
  if (failed || !docs || docs.length !== 1) return null;
  const value = documentValue(docs[0], 'YAML', at);
  return failed || value === undefined ? null : { doc: docs[0], value };
}

const slowReader: SlowReader = { locator, document: slowDocument, dropNulls };

function firstLine(s: string): string {
  return s.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '').slice(0, 200);
}
