// Snapshot files to objects, each able to say where any of its fields stands in its file.
// Positions are looked up only when a problem is reported, so a clean compile pays for
// the parse alone.
//
// The input is untrusted: every way a file can fail to be a snapshot (unreadable, bad
// syntax, nesting deep enough to exhaust the stack, alias bombs and cycles) ends here as
// a positioned diagnostic, never as an exception.
import type { Document, LineCounter, Node } from 'yaml';
import { yaml } from './yaml-lib.js';
import type { Diagnostic, Position } from '../diag/diagnostic.js';
import { nestingProblem, valueShapeProblem, MAX_NESTING } from './shape.js';
import { eachFastObject, readFastObjects, type SlowReader } from './fast-objects.js';
import { jsonObjectSpans, startsWithBrace } from './json-stream.js';
import { LineIndex } from './positions.js';
import { listForm, listItem } from './lists.js';
import { embeddedConfig, isKubeProxyConfigMap, type EmbeddedReader } from './configmap.js';
import type { EmbeddedPlace } from './embedded-text.js';

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
  name: string; // as the user named it; "-" is named STDIN
  text: string;
}

// Reading the files (bytes to text) is read-inputs.ts's; callers take it from here.
export { readInputs, STDIN } from './read-inputs.js';

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

/** The documents of a text, or null when it is not YAML (or JSON) at all. */
function composeDocuments(text: string, syntax: string, at: At): Document.Parsed[] | null {
  try {
    const json = syntax === 'JSON' ? jsonSyntaxProblem(text) : null;
    if (json) {
      at(json.offset, `invalid JSON: ${json.message}`);
      return null;
    }
    // The parser is iterative; composing is recursive, so each document's nesting is
    // bounded before it is composed. Documents stream through, never all tokens at once.
    const composer = new (yaml().Composer)({ uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
    const docs: Document.Parsed[] = [];
    for (const token of new (yaml().Parser)().parse(text)) {
      const deep = nestingProblem([token]);
      if (deep !== null) {
        at(deep, `invalid ${syntax}: nested more than ${MAX_NESTING} levels deep`);
        return null;
      }
      for (const doc of composer.next(token)) docs.push(doc as Document.Parsed);
    }
    for (const doc of composer.end(false, text.length)) docs.push(doc as Document.Parsed);
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

/** The documents of a text embedded in a field (see configmap.ts). */
const embeddedReader: EmbeddedReader = {
  documents(text, file, at) {
    let failed = false;
    const told: At = (offset, message) => {
      failed = true;
      at(offset, message);
    };
    const docs = composeDocuments(text, 'YAML', told) ?? [];
    const out = docs.map((doc) => ({
      value: documentValue(doc, 'YAML', told),
      locate: (place: EmbeddedPlace) => locator(doc, { linePos: place }, file, []),
    }));
    return failed ? null : out;
  },
};

/**
 * An object as the later stages take it: the kube-proxy ConfigMap stands for the
 * configuration in it (null when that cannot be read, with the reason in `diagnostics`).
 */
function asRead(o: SourceObject, f: InputFile, lines: () => LineIndex, diagnostics: Diagnostic[]): SourceObject | null {
  return isKubeProxyConfigMap(o.value) ? embeddedConfig(o, f, lines(), embeddedReader, diagnostics) : o;
}

/** A file's line index, made when first asked for. */
function linesOf(f: InputFile): () => LineIndex {
  let index: LineIndex | undefined;
  return () => (index ??= new LineIndex(f.text));
}

/** Parses every document of every file; YAML and JSON syntax errors become diagnostics. */
export function parseFiles(files: InputFile[], opts: { fast?: boolean } = {}): { objects: SourceObject[]; diagnostics: Diagnostic[] } {
  const objects: SourceObject[] = [];
  const diagnostics: Diagnostic[] = [];
  files.forEach((f, fileIndex) => {
    // Most files are read by the fast path; `fast: false` is for tests that compare both.
    let read = opts.fast === false ? null : readFastObjects(f, fileIndex, slowReader);
    if (!read) {
      read = [];
      parseFull(f, fileIndex, read, diagnostics);
    }
    const lines = linesOf(f);
    for (const o of read) {
      const r = asRead(o, f, lines, diagnostics);
      if (r) objects.push(r);
    }
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
    const lines = linesOf(f);
    const hand = (o: SourceObject) => {
      const r = asRead(o, f, lines, diagnostics);
      if (r) each(r);
    };
    let handed = 0;
    const fast = eachFastObject(f, fileIndex, slowReader, (o) => {
      handed++;
      hand(o);
    });
    if (fast) continue;
    if (handed > 0) return null;
    const objects: SourceObject[] = [];
    parseFull(f, fileIndex, objects, diagnostics);
    for (const o of objects) hand(o);
  }
  return diagnostics;
}

/** A piece of a file's text that the full parser reads as documents of its own. */
interface Piece {
  start: number;
  end: number;
  syntax: 'JSON' | 'YAML';
}

/**
 * How the full parser cuts a file: a stream of JSON objects into its objects, each held
 * to JSON; anything else is one piece, JSON for a .json file and YAML otherwise. A text
 * that starts with "{" but is no such stream (a truncated object, say) is read as YAML
 * only when that reads it without a problem; else the JSON problem is the one line told.
 */
function pieces(f: InputFile, at: At): Piece[] | null {
  const isJson = /\.json$/.test(f.name);
  const whole: Piece[] = [{ start: 0, end: f.text.length, syntax: isJson ? 'JSON' : 'YAML' }];
  if (!startsWithBrace(f.text)) return whole;
  const read = jsonObjectSpans(f.text);
  if ('spans' in read) return read.spans.length > 1 ? read.spans.map(([start, end]) => ({ start, end, syntax: 'JSON' })) : whole;
  if (!isJson && composeDocuments(f.text, 'YAML', () => {})?.every((d) => d.errors.length === 0)) return whole;
  const { offset, message } = read.problem;
  // An object left open may hold an earlier mistake (a stray comma), which is the one to
  // tell; a mistake on the last line is where the text was cut.
  const inside = read.problem.unclosed ? jsonSyntaxProblem(f.text.slice(offset)) : null;
  const lastLine = f.text.trimEnd().lastIndexOf('\n') + 1;
  if (inside && offset + inside.offset < lastLine) at(offset + inside.offset, `invalid JSON: ${inside.message}`);
  else at(offset, `invalid JSON: ${message}`);
  return null;
}

/** A file read by the full parser, with positions for everything. */
function parseFull(f: InputFile, fileIndex: number, objects: SourceObject[], diagnostics: Diagnostic[]): void {
  const index = new LineIndex(f.text);
  const atIn = (start: number): At => (offset, message) => {
    const lp = index.linePos(start + offset);
    diagnostics.push({ severity: 'error', pos: { file: f.name, line: lp.line, col: lp.col }, message });
  };
  let docIndex = 0;
  for (const piece of pieces(f, atIn(0)) ?? []) {
    const at = atIn(piece.start);
    const text = piece.start === 0 && piece.end === f.text.length ? f.text : f.text.slice(piece.start, piece.end);
    const docs = composeDocuments(text, piece.syntax, at);
    // A stream is read no further than its first object with a problem, as kubectl reads it.
    if (!docs) break;
    const lines = index.from(piece.start);
    for (const doc of docs) {
      const value = documentValue(doc, piece.syntax, at);
      const order = docIndex++;
      if (value === undefined || value === null) continue; // reported, or an empty document
      const locate = (base: FieldPath) => locator(doc, lines, f.name, base);
      if (typeof value !== 'object' || Array.isArray(value)) {
        at(doc.contents?.range?.[0] ?? 0, 'document is not a Kubernetes object (expected a mapping with apiVersion and kind)');
        continue;
      }
      addDocument(f, value as Record<string, unknown>, locate, [fileIndex, order], objects, diagnostics);
    }
  }
}

/** The objects of one document: itself, or the items of a list. */
function addDocument(
  f: InputFile,
  obj: Record<string, unknown>,
  locate: (base: FieldPath) => SourceObject['locate'],
  [fileIndex, docIndex]: [number, number],
  objects: SourceObject[],
  diagnostics: Diagnostic[],
): void {
  const form = listForm(obj);
  if (!form) {
    objects.push({ file: f.name, value: obj, locate: locate([]), order: [fileIndex, docIndex, 0] });
  } else if (obj.items !== undefined && !Array.isArray(obj.items)) {
    diagnostics.push({ severity: 'error', pos: locate([])(['items']), kind: String(obj.kind), field: 'items', message: 'must be a list of objects' });
  } else {
    ((obj.items ?? []) as unknown[]).forEach((item, i) => {
      if (item !== null && item !== undefined) objects.push({ file: f.name, value: listItem(form, item), locate: locate(['items', i]), order: [fileIndex, docIndex, i] });
    });
  }
}

/** One YAML document's text read as parseFiles reads it; null when it has any problem to report. */
function slowDocument(text: string, file: string, marker: string): { doc: Document.Parsed; value: unknown } | null {
  let failed = false;
  const at: At = () => {
    failed = true;
  };
  // The marker line makes a second document (read, so that a problem in it is found too).
  const docs = composeDocuments(text + marker, 'YAML', at);
  if (failed || !docs || docs.length !== (marker ? 2 : 1)) return null;
  const value = documentValue(docs[0], 'YAML', at);
  return failed || value === undefined ? null : { doc: docs[0], value };
}

const slowReader: SlowReader = { locator, document: slowDocument, dropNulls };

function firstLine(s: string): string {
  return s.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '').slice(0, 200);
}
