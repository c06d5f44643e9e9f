// Snapshot objects from the fast path, with positions found lazily: the first locate() on
// an object reads the piece of text that holds it (its document, or its List item) with
// the positioned parser, and the offsets found there are moved to the file's lines.
import type { Document, LineCounter } from 'yaml';
import { yaml } from './yaml-lib.js';
import type { Position } from '../diag/diagnostic.js';
import { readFastEach, type FastDocument, type Fragment } from './fast-parse.js';
import { LineIndex } from './positions.js';
import { listForm, listItem } from './lists.js';
import type { FieldPath, InputFile, LocateOptions, SourceObject } from './source.js';

type LinePos = Pick<LineCounter, 'linePos'>;
type Locate = SourceObject['locate'];

/** What the fast path borrows from source.ts, so that positions and values come out the same. */
export interface SlowReader {
  /** The locate() of an object at `base` inside a document parsed with positions. */
  locator(doc: Document, lines: LinePos, file: string, base: FieldPath): Locate;
  /**
   * One YAML document's text read by the full parser: its document and value, or null on
   * any problem. `marker`: the `---` line that follows it in its file, read with it.
   */
  document(text: string, file: string, marker: string): { doc: Document.Parsed; value: unknown } | null;
  /** What parseFiles does to every value after reading it (null fields are absent ones). */
  dropNulls(value: unknown): void;
}

/** A piece of a file's text (a document, or an item of a List) parsed with positions on first use. */
class LazyDocument {
  #doc: Document | null = null;

  constructor(
    private readonly f: InputFile,
    private readonly start: number,
    private readonly end: number,
  ) {}

  get(): Document {
    return (this.#doc ??= yaml().parseDocument(this.f.text.slice(this.start, this.end), { prettyErrors: false }));
  }
}

/** The object at `base` in a piece of text that starts at `start` in its file. */
class LazyPlace {
  #locate: Locate | null = null;

  constructor(
    readonly f: InputFile,
    private readonly lines: LineIndex,
    private readonly start: number,
    private readonly doc: LazyDocument,
    private readonly base: FieldPath,
    private readonly slow: SlowReader,
  ) {}

  position(path: FieldPath, opts: LocateOptions | undefined): Position {
    return (this.#locate ??= this.slow.locator(this.doc.get(), this.lines.from(this.start), this.f.name, this.base))(path, opts);
  }
}

/**
 * Where a field stands, worked out when its line or column is first read: some stages
 * note where an object stands whether or not they report anything there. One small
 * object: many are kept (every Service's), and most are never read.
 */
class LazyPosition implements Position {
  readonly file: string;
  #found: Position | null = null;

  constructor(
    private readonly place: LazyPlace,
    private readonly path: FieldPath,
    private readonly opts: LocateOptions | undefined,
  ) {
    this.file = place.f.name;
  }

  get line(): number {
    return this.found().line;
  }

  get col(): number {
    return this.found().col;
  }

  private found(): Position {
    return (this.#found ??= this.place.position(this.path, this.opts));
  }

  /** As a plain position reads. */
  toJSON(): Position {
    return { file: this.file, line: this.line, col: this.col };
  }
}

/** A locate() for the object at `base` in a piece of text, its positions worked out when read. */
function lazyLocate(f: InputFile, lines: LineIndex, start: number, doc: LazyDocument, base: FieldPath, slow: SlowReader): Locate {
  const place = new LazyPlace(f, lines, start, doc, base, slow);
  return (field, opts) => new LazyPosition(place, [...field], opts);
}

/** A document's value and where its objects stand, or null when the whole file must go to the full parser. */
function documentOf(f: InputFile, lines: LineIndex, d: FastDocument, slow: SlowReader) {
  if (d.wholeFile) return null;
  if (d.value === undefined) {
    // Outside the fast reader's subset: this document alone through the full parser, with
    // the marker line after it, which can change its reading (the yaml package refuses a
    // blank line indented by a tab before a `---`, not at the end of the text).
    const lineEnd = f.text.indexOf('\n', d.end);
    const marker = f.text.slice(d.end, lineEnd === -1 ? f.text.length : lineEnd + 1);
    const read = slow.document(f.text.slice(d.start, d.end), f.name, marker);
    if (!read) return null;
    const locate = (base: FieldPath) => slow.locator(read.doc, lines.from(d.start), f.name, base);
    return { value: read.value, locate, item: () => null };
  }
  if (d.nullField) slow.dropNulls(d.value);
  const doc = new LazyDocument(f, d.start, d.end);
  return { value: d.value, locate: (base: FieldPath) => lazyLocate(f, lines, d.start, doc, base, slow), item: d.item };
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
  // What is not a Kubernetes object (or list of them) is reported by the full parser.
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const obj = value as Record<string, unknown>;
  const form = listForm(obj);
  if (!form) {
    each({ file: f.name, value, locate: d.locate([]), order: [fileIndex, docIndex, 0] });
    return true;
  }
  if (obj.items !== undefined && !Array.isArray(obj.items)) return false;
  const items = (obj.items ?? []) as unknown[];
  for (let i = 0; i < items.length; i++) {
    if (items[i] === null || items[i] === undefined) continue;
    const piece: Fragment | null = d.item(i);
    const locate = piece ? lazyLocate(f, lines, piece.start, new LazyDocument(f, piece.start, piece.end), piece.base, slow) : d.locate(['items', i]);
    each({ file: f.name, value: listItem(form, items[i]), locate, order: [fileIndex, docIndex, i] });
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
