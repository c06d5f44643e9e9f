// Snapshot objects from the fast path, with positions found lazily: the first locate() on
// an object reads the piece of text that holds it (its document, or its List item) with
// the positioned parser, and the offsets found there are moved to the file's lines.
import { LineCounter, parseDocument, type Document } from 'yaml';
import type { Position } from '../diag/diagnostic.js';
import { readFastEach, type FastDocument, type Fragment } from './fast-parse.js';
import { LineIndex } from './positions.js';
import type { FieldPath, InputFile, SourceObject } from './source.js';

type LinePos = Pick<LineCounter, 'linePos'>;
type Locate = SourceObject['locate'];

/** What the fast path borrows from source.ts, so that positions and values come out the same. */
export interface SlowReader {
  /** The locate() of an object at `base` inside a document parsed with positions. */
  locator(doc: Document, lines: LinePos, file: string, base: FieldPath): Locate;
  /** One YAML document's text read by the full parser: its document and value, or null on any problem. */
  document(text: string, file: string): { doc: Document.Parsed; value: unknown } | null;
  /** What parseFiles does to every value after reading it (null fields are absent ones). */
  dropNulls(value: unknown): void;
}

/** The piece's text parsed with positions, on first use. */
function lazyDocument(f: InputFile, start: number, end: number): () => Document {
  let doc: Document | null = null;
  return () => (doc ??= parseDocument(f.text.slice(start, end), { prettyErrors: false }));
}

/**
 * A locate() for the object at `base` in a piece of text. Its positions are worked out
 * when their line or column is first read: some stages note where an object stands
 * whether or not they report anything there.
 */
function lazyLocate(f: InputFile, lines: LineIndex, start: number, docOf: () => Document, base: FieldPath, slow: SlowReader): Locate {
  let locate: Locate | null = null;
  return (field, opts) => {
    const path = [...field];
    let pos: Position | null = null;
    const resolve = () => (pos ??= (locate ??= slow.locator(docOf(), lines.from(start), f.name, base))(path, opts));
    return {
      file: f.name,
      get line() {
        return resolve().line;
      },
      get col() {
        return resolve().col;
      },
    };
  };
}

/** A document's value and where its objects stand, or null when the whole file must go to the full parser. */
function documentOf(f: InputFile, lines: LineIndex, d: FastDocument, slow: SlowReader) {
  if (d.value === undefined) {
    // Outside the fast reader's subset: this document alone through the full parser.
    const read = slow.document(f.text.slice(d.start, d.end), f.name);
    if (!read) return null;
    const locate = (base: FieldPath) => slow.locator(read.doc, lines.from(d.start), f.name, base);
    return { value: read.value, locate, item: () => null };
  }
  if (d.nullField) slow.dropNulls(d.value);
  const docOf = lazyDocument(f, d.start, d.end);
  return { value: d.value, locate: (base: FieldPath) => lazyLocate(f, lines, d.start, docOf, base, slow), item: d.item };
}

/**
 * Hands the objects of a file read by the fast path to `each`, in order, each as soon as
 * its document is read. False when the file must be read by the full parser as a whole:
 * some document has a problem to report (with its position), or is outside what the fast
 * path can place exactly; objects of the documents before it have been handed over by then.
 */
export function eachFastObject(f: InputFile, fileIndex: number, slow: SlowReader, each: (o: SourceObject) => void): boolean {
  const lines = new LineIndex(f.text);
  let docIndex = 0;
  let whole = true;
  const read = readFastEach(f.text, /\.json$/.test(f.name), (doc) => {
    whole = handDocument(f, fileIndex, docIndex++, lines, doc, slow, each);
    return whole;
  });
  return read && whole;
}

/** The objects of one document to `each`; false when the file must go to the full parser. */
function handDocument(f: InputFile, fileIndex: number, docIndex: number, lines: LineIndex, doc: FastDocument, slow: SlowReader, each: (o: SourceObject) => void): boolean {
  const d = documentOf(f, lines, doc, slow);
  if (!d) return false;
  const value = d.value;
  if (value === null || value === undefined) return true; // an empty document
  // What is not a Kubernetes object (or List of them) is reported by the full parser.
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const obj = value as Record<string, unknown>;
  if (obj.kind !== 'List') {
    each({ file: f.name, value, locate: d.locate([]), order: [fileIndex, docIndex, 0] });
    return true;
  }
  if (obj.items !== undefined && !Array.isArray(obj.items)) return false;
  const items = (obj.items ?? []) as unknown[];
  for (let i = 0; i < items.length; i++) {
    if (items[i] === null || items[i] === undefined) continue;
    const piece: Fragment | null = d.item(i);
    const locate = piece ? lazyLocate(f, lines, piece.start, lazyDocument(f, piece.start, piece.end), piece.base, slow) : d.locate(['items', i]);
    each({ file: f.name, value: items[i], locate, order: [fileIndex, docIndex, i] });
  }
  return true;
}

/**
 * The objects of a file through the fast path, or null when the file must be read by the
 * full parser as a whole (see eachFastObject).
 */
export function readFastObjects(f: InputFile, fileIndex: number, slow: SlowReader): SourceObject[] | null {
  const objects: SourceObject[] = [];
  return eachFastObject(f, fileIndex, slow, (o) => objects.push(o)) ? objects : null;
}
