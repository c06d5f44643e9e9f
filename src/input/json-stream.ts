// A stream of JSON objects one after another, as kubectl's decoder reads a text whose
// first character is "{": `{ kubectl get svc -o json; kubectl get nodes -o json; }`
// prints two. Only the objects' extents are found here (brackets outside strings); what
// is inside each is read by JSON.parse or the full parser.

/** Whether the text's first character other than white space opens a JSON object. */
export function startsWithBrace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b) return true;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return false;
}

export type Spans = { spans: [number, number][] } | { problem: { offset: number; message: string; unclosed?: boolean } };

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The end of the JSON object that opens at `start`: the offset after its closing brace,
 * or -1 when the text ends first. Brackets are counted alike, so a bracket closed by the
 * other kind is left for JSON.parse to report.
 */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: the next one not escaped.
      for (i++; i < text.length; i++) {
        const x = text.charCodeAt(i);
        if (x === 0x5c) i++;
        else if (x === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

function shown(c: string): string {
  return JSON.stringify(c);
}

/**
 * [start, end) of each object of a text that starts with "{", with only white space
 * between them; or the first problem that keeps it from being such a stream.
 */
export function jsonObjectSpans(text: string): Spans {
  const spans: [number, number][] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (i === text.length) return { spans };
    if (text.charCodeAt(i) !== 0x7b) {
      const what = spans.length === 0 ? 'a JSON object' : 'another JSON object or the end of the input';
      return { problem: { offset: i, message: `expected ${what}, found ${shown(text[i])}` } };
    }
    const end = objectEnd(text, i);
    if (end === -1) {
      return { problem: { offset: i, message: 'this JSON object is not closed before the input ends (truncated?)', unclosed: true } };
    }
    spans.push([i, end]);
    i = end;
  }
}
