// Where a character of a text held in a string field stands in the file, so that a problem
// inside an embedded document (the KubeProxyConfiguration in a ConfigMap's data) is told
// at its own line and column. The field's source is read again from its first character:
// a literal block scalar (`|`, as `kubectl get -o yaml` prints it) maps line by line, a
// quoted scalar on one line (`"...\n..."`, as `kubectl get -o json` prints it) escape by
// escape. Either map is used only when the text it reads back is the field's value
// exactly; anything else (a folded scalar, a quoted one over several lines) maps every
// character to the field's first one, which is true if not precise.

import { lineOf, lineStarts } from './positions.js';

export interface Place {
  line: number;
  col: number;
}

/** Line and column (from 1) of an offset of the embedded text. */
export type EmbeddedPlace = (offset: number) => Place;

/**
 * A literal block scalar whose header (`|`, `|-`, `|+`, `|2`...) stands at `at`: its
 * content lines, each with the file offset of its first content character.
 */
function literalBlock(src: string, at: number, fileStarts: number[]): { text: string; lines: number[] } | null {
  const header = /^\|([1-9])?[-+]?([1-9])?[ \t]*(?:#.*)?$/.exec(src.slice(at, lineEnd(src, at)));
  if (!header) return null;
  const headerLine = lineOf(fileStarts, at);
  const parentIndent = indentOfLine(src, fileStarts[headerLine]);
  const explicit = header[1] ?? header[2];
  let indent = explicit ? parentIndent + Number(explicit) : -1;
  const lines: string[] = [];
  const offsets: number[] = [];
  for (let l = headerLine + 1; l < fileStarts.length; l++) {
    const start = fileStarts[l];
    const end = lineEnd(src, start);
    const spaces = indentOfLine(src, start);
    const blank = start + spaces >= end;
    if (!blank && indent === -1) {
      if (spaces <= parentIndent) break;
      indent = spaces;
    }
    if (!blank && spaces < indent) break;
    lines.push(blank ? '' : src.slice(start + indent, end));
    offsets.push(blank ? start : start + indent);
  }
  return { text: lines.join('\n'), lines: offsets };
}

function lineEnd(src: string, i: number): number {
  const e = src.indexOf('\n', i);
  return e === -1 ? src.length : e;
}

function indentOfLine(src: string, start: number): number {
  let i = start;
  while (src.charCodeAt(i) === 0x20) i++;
  return i - start;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b',
  ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029',
};
const HEX_ESCAPES: Record<string, number> = { x: 2, u: 4, U: 8 };

/**
 * A quoted scalar that opens at `at` and closes on the same line: its text, and for each
 * of its UTF-16 code units the file offset of the source character it comes from.
 */
function quotedLine(src: string, at: number): { text: string; offsets: number[] } | null {
  const q = src[at];
  const end = lineEnd(src, at);
  let text = '';
  const offsets: number[] = [];
  for (let i = at + 1; i < end; i++) {
    const c = src[i];
    if (c === q) {
      if (q === "'" && src[i + 1] === "'") {
        text += "'";
        offsets.push(i++);
        continue;
      }
      return { text, offsets };
    }
    if (q === '"' && c === '\\') {
      const e = src[i + 1];
      const width = HEX_ESCAPES[e];
      let decoded: string | undefined;
      if (width !== undefined) {
        const digits = src.slice(i + 2, i + 2 + width);
        if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== width) return null;
        decoded = String.fromCodePoint(parseInt(digits, 16));
      } else decoded = SIMPLE_ESCAPES[e];
      if (decoded === undefined) return null;
      for (let k = 0; k < decoded.length; k++) offsets.push(i);
      text += decoded;
      i += 1 + (width ?? 0);
      continue;
    }
    text += c;
    offsets.push(i);
  }
  return null; // closed on a later line: folded, and not mapped here
}

/**
 * Where each character of `value` (the string field whose first character stands at file
 * offset `at` of `src`) stands in the file.
 */
export function embeddedPlace(src: string, at: number, value: string): EmbeddedPlace {
  const fileStarts = lineStarts(src);
  const place = (fileOffset: number): Place => {
    const l = lineOf(fileStarts, fileOffset);
    return { line: l + 1, col: fileOffset - fileStarts[l] + 1 };
  };
  const c = src[at];
  if (c === '|') {
    const block = literalBlock(src, at, fileStarts);
    // Chomping changes only the line breaks at the end.
    if (block && block.text.replace(/\n+$/, '') === value.replace(/\n+$/, '')) {
      const starts = lineStarts(value);
      return (offset) => {
        const l = Math.min(lineOf(starts, offset), block.lines.length - 1);
        return place(block.lines[l] + (offset - starts[l]));
      };
    }
  } else if (c === '"' || c === "'") {
    const quoted = quotedLine(src, at);
    if (quoted && quoted.text === value) {
      // The end of the text is where its closing quote stands.
      return (offset) => place(offset < quoted.offsets.length ? quoted.offsets[offset] : (quoted.offsets[quoted.offsets.length - 1] ?? at) + 1);
    }
  }
  const first = place(at);
  return () => first;
}
