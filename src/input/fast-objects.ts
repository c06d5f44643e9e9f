// Snapshot objects from the fast path, with positions found lazily: the first locate() on
// an object reads the piece of text that holds it (its document, or its List item) with
// the positioned parser, and the offsets found there are moved to the file's lines.
import { LineCounter, parseDocument, type Document } from 'yaml';
import type { Position } from '../diag/diagnostic.js';
import { readFast, type Fragment } from './fast-parse.js';
import { LineIndex } from './positions.js';
import type { FieldPath, InputFile, SourceObject } from './source.js';

type LinePos = Pick<LineCounter, 'linePos'>;
type Locate = (field: FieldPath) => Position;

/** What the fast path borrows from source.ts, so that positions and values are found the same way. */
export interface SlowReader {
  /** The locate() of an object at `base` inside a document parsed with positions. */
  locator(doc: Document, lines: LinePos, file: string, base: FieldPath): Locate;
  /** One document's text read by the full parser: its parsed document and value, or null on any problem. */
  document(text: string, file: string): { doc: Document.Parsed; value: unknown } | null;
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
  return (field) => {
    const path = [...field];
    let pos: Position | null = null;
    const resolve = () => (pos ??= (locate ??= slow.locator(docOf(), lines.from(start), f.name, base))(path));
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

/**
 * The objects of a file through the fast path, or null when the file must be read by the
 * full parser as a whole (some document has a problem to report, or is outside what the
 * fast path can place exactly).
 */
export function readFastObjects(f: InputFile, fileIndex: number, slow: SlowReader): SourceObject[] | null {
  const docs = readFast(f.text, /\.json$/.test(f.name));
  if (!docs) return null;
  const lines = new LineIndex(f.text);
  const objects: SourceObject[] = [];
  for (let docIndex = 0; docIndex < docs.length; docIndex++) {
    const d = docs[docIndex];
    let value = d.value;
    let docLocate: (base: FieldPath) => Locate;
    let itemPiece: (i: number) => Fragment | null = d.item;
    if (value === undefined) {
      // Outside the fast reader's subset: this document alone through the full parser.
      const read = slow.document(f.text.slice(d.start, d.end), f.name);
      if (!read) return null;
      value = read.value;
      docLocate = (base) => slow.locator(read.doc, lines.from(d.start), f.name, base);
      itemPiece = () => null;
    } else {
      const docOf = lazyDocument(f, d.start, d.end);
      docLocate = (base) => lazyLocate(f, lines, d.start, docOf, base, slow);
    }
    if (value === null || value === undefined) continue; // an empty document
    // Anything that is not a mapping is reported by the full parser, with its position.
    if (typeof value !== 'object' || Array.isArray(value)) return null;
    const obj = value as Record<string, unknown>;
    if (obj.kind === 'List' && Array.isArray(obj.items)) {
      const items = obj.items as unknown[];
      for (let i = 0; i < items.length; i++) {
        if (items[i] === null || items[i] === undefined) continue;
        const piece = itemPiece(i);
        const locate = piece ? lazyLocate(f, lines, piece.start, lazyDocument(f, piece.start, piece.end), piece.base, slow) : docLocate(['items', i]);
        objects.push({ file: f.name, value: items[i], locate, order: [fileIndex, docIndex, i] });
      }
      continue;
    }
    objects.push({ file: f.name, value, locate: docLocate([]), order: [fileIndex, docIndex, 0] });
  }
  return objects;
}
