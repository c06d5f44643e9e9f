// Positions for objects read by the fast path. They are worked out only when a problem is
// reported: the piece of text that holds the object (its document, or its item of a List)
// is then read again by the `yaml` package, which knows where every node stands, and its
// offsets are moved to where that piece stands in the file.

/** The offsets of the line starts of a text: [0, after the first "\n", ...]. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The index of the last start at or before offset: the line (from 0) the offset is on. */
export function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Line and column (both from 1) of offsets in a text; the line starts are found on first use. */
export class LineIndex {
  private starts: number[] | null = null;

  constructor(private readonly text: string) {}

  linePos(offset: number): { line: number; col: number } {
    this.starts ??= lineStarts(this.text);
    const line = lineOf(this.starts, offset);
    return { line: line + 1, col: offset - this.starts[line] + 1 };
  }

  /** The offset of a line and column (both from 1). */
  offsetOf(line: number, col: number): number {
    this.linePos(0); // the line starts, found on first use
    return this.starts![line - 1] + col - 1;
  }

  /** The same, for offsets counted from `start` (a piece of the text read on its own). */
  from(start: number): { linePos(offset: number): { line: number; col: number } } {
    return { linePos: (offset) => this.linePos(start + offset) };
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The end of the JSON value starting at i (valid JSON is assumed). */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c !== 0x7b && c !== 0x5b) {
    // number, true, false, null
    let j = i;
    while (j < text.length && !/[\s,\]}]/.test(text[j])) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const x = text.charCodeAt(j);
    if (x === QUOTE) j = stringEnd(text, j) - 1;
    else if (x === 0x7b || x === 0x5b) depth++;
    else if (x === 0x7d || x === 0x5d) {
      if (--depth === 0) return j + 1;
    }
  }
  return text.length;
}

function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const x = text.charCodeAt(j);
    if (x === BACKSLASH) j++;
    else if (x === QUOTE) return j + 1;
  }
  return text.length;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

/**
 * Where each item of the top-level "items" array of the JSON object at `start` stands:
 * [start, end) offsets of its text. Null when there is no such array. The object is valid
 * JSON.
 */
export function jsonListItems(text: string, start = 0): [number, number][] | null {
  let i = skipSpace(text, start);
  if (text.charCodeAt(i) !== 0x7b) return null;
  i = skipSpace(text, i + 1);
  while (text.charCodeAt(i) === QUOTE) {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd) + 1; // past ":"
    i = skipSpace(text, i);
    if (key === 'items' && text.charCodeAt(i) === 0x5b) {
      const items: [number, number][] = [];
      i = skipSpace(text, i + 1);
      while (text.charCodeAt(i) !== 0x5d) {
        const end = valueEnd(text, i);
        items.push([i, end]);
        i = skipSpace(text, end);
        if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
      }
      return items;
    }
    i = skipSpace(text, valueEnd(text, i));
    if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
  }
  return null;
}
