// The fast path for snapshot files: JSON through JSON.parse, YAML cut into its documents
// at their `---` lines and each read by the block reader (fast-yaml.ts). Either gives the
// same values as the `yaml` package; what it cannot vouch for is marked for the full
// parser, per document where that is exact, else for the whole file.
import { BlockReader, NotFast } from './fast-yaml.js';
import { fastJson } from './fast-json.js';
import { jsonObjectSpans } from './json-stream.js';
import { jsonListItems } from './positions.js';

/** A piece of a file's text that the positioned parser can read on its own. */
export interface Fragment {
  start: number;
  end: number;
  /** Path of the object inside the piece's own document. */
  base: (string | number)[];
}

export interface FastDocument {
  /** The document's text: [start, end) in the file. */
  start: number;
  end: number;
  /** Its value as the `yaml` package's toJS gives it; undefined when the full parser must read it. */
  value: unknown;
  /** Why the fast path left it (for tests). */
  notFast?: string;
  /** Whether some mapping in it holds a null value. */
  nullField?: boolean;
  /** Whether its problem can be reported only by the full parser reading the whole file. */
  wholeFile?: boolean;
  /** The text of item i of a List document, where the fast path knows it. */
  item(i: number): Fragment | null;
}

const noItems = () => null;

// Characters that are not for the fast reader: tabs (YAML's rules for them are subtle), and
// characters that are not printable or that some YAML readers take as line breaks.
const NOT_FAST_CHARS = /[\t\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g;

/**
 * Where each document starts: the first at 0, the others at their "---" line. Null when
 * the file has what the cut cannot place exactly: directives, "..." lines, carriage
 * returns.
 */
export function documentStarts(text: string): number[] | null {
  if (text.includes('\r') || hasDirectiveOrEnd(text)) return null;
  const starts = [0];
  // "---" is rarer than a line break, so it is what is searched for.
  for (let i = text.indexOf('---', 1); i !== -1; i = text.indexOf('---', i + 3)) {
    if (text.charCodeAt(i - 1) !== 0x0a) continue;
    const c = text.charCodeAt(i + 3);
    if (Number.isNaN(c) || c === 0x0a || c === 0x20 || c === 0x09) starts.push(i);
  }
  return starts;
}

const DIRECTIVE_OR_END = /^(?:%|\.\.\.(?:[ \t\n]|$))/m;

/**
 * Whether some line starts with a directive ("%") or is a document end ("..."), as
 * DIRECTIVE_OR_END finds them. Lines are found by indexOf, much faster than the pattern's
 * scan of every character; a text with the other line breaks of JavaScript patterns
 * (U+2028, U+2029; carriage returns are screened out before) is left to the pattern.
 */
function hasDirectiveOrEnd(text: string): boolean {
  if (text.includes('\u2028') || text.includes('\u2029')) return DIRECTIVE_OR_END.test(text);
  const isEnd = (i: number) => {
    if (!text.startsWith('...', i)) return false;
    const c = text.charCodeAt(i + 3);
    return Number.isNaN(c) || c === 0x20 || c === 0x09 || c === 0x0a;
  };
  // The rare character first, then whether it starts a line.
  const atLineStart = (i: number) => i === 0 || text.charCodeAt(i - 1) === 0x0a;
  for (let i = text.indexOf('%'); i !== -1; i = text.indexOf('%', i + 1)) if (atLineStart(i)) return true;
  for (let i = text.indexOf('...'); i !== -1; i = text.indexOf('...', i + 1)) if (atLineStart(i) && isEnd(i)) return true;
  return false;
}

/** True when the text holds nothing but blank lines and comments. */
function onlyComments(text: string, start: number, end: number): boolean {
  return /^(?:[ \t]*(?:#.*)?\n)*[ \t]*(?:#.*)?$/.test(text.slice(start, end));
}

/** Hands each document to `each` as it is read; false (before any) when the file is for the full parser. */
function readYamlDocuments(text: string, each: (d: FastDocument) => boolean): boolean {
  const starts = documentStarts(text);
  if (!starts) return false;
  // Comments before the first "---" belong to the document it starts, as in the yaml
  // package; a text of nothing but comments holds no document at all.
  if (onlyComments(text, 0, starts.length > 1 ? starts[1] : text.length)) starts.splice(starts.length > 1 ? 1 : 0, 1);
  NOT_FAST_CHARS.lastIndex = 0;
  let bad = NOT_FAST_CHARS.exec(text)?.index ?? Infinity;
  for (let d = 0; d < starts.length; d++) {
    const start = starts[d];
    const end = d + 1 < starts.length ? starts[d + 1] : text.length;
    if (bad < end) {
      // Skip to the first such character after this document.
      NOT_FAST_CHARS.lastIndex = end;
      bad = NOT_FAST_CHARS.exec(text)?.index ?? Infinity;
      if (!each({ start, end, value: undefined, notFast: 'tab or unusual character', item: noItems })) break;
      continue;
    }
    if (!each(readYamlDocument(text, start, end))) break;
  }
  return true;
}

function readYamlDocument(text: string, start: number, end: number): FastDocument {
  const reader = new BlockReader(text, start, end);
  try {
    const value = reader.read();
    const items = reader.listItems;
    const item = items ? (i: number) => (i + 1 < items.length ? { start: items[i], end: items[i + 1], base: [0] } : null) : noItems;
    return { start, end, value, item, nullField: reader.nullField };
  } catch (e) {
    if (!(e instanceof NotFast)) throw e;
    return { start, end, value: undefined, notFast: e.message, item: noItems };
  }
}

/** The JSON object text[start, end) by the fast path, or null when the full parser must read it. */
function readJsonDocument(text: string, start: number, end: number): FastDocument | null {
  const read = fastJson(start === 0 && end === text.length ? text : text.slice(start, end));
  if (read === null) return null;
  let items: [number, number][] | null | undefined;
  const item = (i: number): Fragment | null => {
    items ??= jsonListItems(text, start);
    const r = items?.[i];
    return r ? { start: r[0], end: r[1], base: [] } : null;
  };
  return { start, end, value: read.value, item, nullField: read.nullField };
}

/**
 * A stream of JSON objects (see json-stream.ts), each handed to `each` as it is read;
 * false, before any, when the text is not such a stream. An object that is not valid JSON
 * is for the full parser reading the whole file (which reports it); one the fast path
 * merely leaves is read alone by the full parser.
 */
function readJsonStream(text: string, each: (d: FastDocument) => boolean): boolean {
  const read = jsonObjectSpans(text);
  if (!('spans' in read) || read.spans.length < 2) return false;
  for (const [start, end] of read.spans) {
    let doc = readJsonDocument(text, start, end);
    if (!doc) {
      const valid = (() => {
        try {
          JSON.parse(text.slice(start, end));
          return true;
        } catch {
          return false;
        }
      })();
      doc = { start, end, value: undefined, notFast: valid ? 'JSON the fast path leaves' : 'invalid JSON', wholeFile: !valid, item: noItems };
    }
    if (!each(doc)) break;
  }
  return true;
}

/**
 * Reads the documents of a file by the fast path, handing each to `each` as soon as it is
 * read (so that its value may die young); `each` returns false to stop. False, before
 * any document, when the whole file is for the full parser. `json` is for .json files,
 * which must be JSON; a YAML file that holds JSON (as `kubectl get -o json` prints it) is
 * tried as JSON first, one object or a stream of them.
 */
export function readFastEach(text: string, json: boolean, each: (d: FastDocument) => boolean): boolean {
  if (json || /^\s*\{/.test(text.slice(0, 256))) {
    const doc = readJsonDocument(text, 0, text.length);
    if (doc) {
      each(doc);
      return true;
    }
    if (readJsonStream(text, each)) return true;
    if (json) return false;
  }
  return readYamlDocuments(text, each);
}

/** The documents of a file read by the fast path, or null when the whole file is for the full parser. */
export function readFast(text: string, json: boolean): FastDocument[] | null {
  const docs: FastDocument[] = [];
  return readFastEach(text, json, (d) => docs.push(d) > 0) ? docs : null;
}
