// The bytes of an input file to its text, taken as kubectl's decoder takes them: UTF-8,
// with or without a byte-order mark, or UTF-16 (little or big endian) with one, which is
// what Windows PowerShell's `>` writes. Whatever is not such text (binary data, a
// compressed file, UTF-16 without its mark, bytes that are not UTF-8) is refused with one
// line that says what it is, at the first byte that shows it.
import { isUtf8 } from 'node:buffer';

export type TextOrProblem = { text: string } | { problem: string; line: number; col: number };

const SAVE_AS_UTF8 = 'save it as UTF-8 (PowerShell: Out-File -Encoding utf8)';

/** Line and column (from 1) of the character that `prefix` (the text before it) ends at. */
function endOf(prefix: string): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = prefix.indexOf('\n'); i !== -1; i = prefix.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, col: prefix.length - lineStart + 1 };
}

/** The length of the valid UTF-8 sequence at i, or 0 when the byte there starts none. */
function utf8SequenceAt(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  const cont = (k: number) => i + k < b.length && (b[i + k] & 0xc0) === 0x80;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const c1 = b[i + 1];
    // No overlong forms (E0 80..9F) and no surrogates (ED A0..BF).
    if ((c === 0xe0 && c1 < 0xa0) || (c === 0xed && c1 >= 0xa0)) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const c1 = b[i + 1];
    if ((c === 0xf0 && c1 < 0x90) || (c === 0xf4 && c1 >= 0x90)) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** The offset of the first byte that is not part of valid UTF-8 (the text is known to hold one). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const n = utf8SequenceAt(b, i);
    if (n === 0) return i;
    i += n;
  }
  return b.length;
}

function hex(byte: number): string {
  return `0x${byte.toString(16).padStart(2, '0')}`;
}

/** Whether NUL bytes stand at every other offset, as in UTF-16 text of mostly ASCII characters. */
function looksLikeUtf16(b: Uint8Array): 'LE' | 'BE' | null {
  const n = Math.min(b.length, 4096) & ~1;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (b[i] === 0) even++;
    if (b[i + 1] === 0) odd++;
  }
  const half = n / 2;
  if (half === 0) return null;
  if (odd > half * 0.6 && even < half * 0.1) return 'LE';
  if (even > half * 0.6 && odd < half * 0.1) return 'BE';
  return null;
}

function utf16(b: Uint8Array, endian: 'LE' | 'BE'): TextOrProblem {
  const body = b.subarray(2);
  try {
    return { text: new TextDecoder(endian === 'LE' ? 'utf-16le' : 'utf-16be', { fatal: true, ignoreBOM: true }).decode(body) };
  } catch {
    // Where it goes wrong: the text decoded leniently up to the first replacement character.
    const lenient = new TextDecoder(endian === 'LE' ? 'utf-16le' : 'utf-16be', { ignoreBOM: true }).decode(body);
    const bad = lenient.indexOf('\ufffd');
    const at = endOf(lenient.slice(0, bad === -1 ? lenient.length : bad));
    const why = body.length % 2 === 1 && bad === lenient.length - 1 ? 'ends in half a character (truncated?)' : 'holds an unpaired surrogate';
    return { problem: `not readable: UTF-16 ${endian} text (it has a byte-order mark) that ${why}`, ...at };
  }
}

/** The text of a file's bytes, or the one problem that keeps them from being read as text. */
export function decodeText(b: Uint8Array): TextOrProblem {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
    const body = b.subarray(3);
    if (isUtf8(body)) return { text: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') };
    return invalidUtf8(body);
  }
  if ((b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) || (b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff)) {
    return { problem: `not readable: UTF-32 text; ${SAVE_AS_UTF8}`, line: 1, col: 1 };
  }
  if (b[0] === 0xff && b[1] === 0xfe) return utf16(b, 'LE');
  if (b[0] === 0xfe && b[1] === 0xff) return utf16(b, 'BE');
  if (b[0] === 0x1f && b[1] === 0x8b) return { problem: 'not readable: gzip-compressed data; decompress it first (gunzip)', line: 1, col: 1 };
  const nul = b.indexOf(0);
  if (nul !== -1) {
    const endian = looksLikeUtf16(b);
    if (endian) return { problem: `not readable: UTF-16 ${endian} text without a byte-order mark; ${SAVE_AS_UTF8}, or with its mark`, line: 1, col: 1 };
    const at = endOf(Buffer.from(b.buffer, b.byteOffset, nul).toString('utf8'));
    return { problem: `not readable: binary data, not text (a NUL byte at offset ${nul})`, ...at };
  }
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (isUtf8(buf)) return { text: buf.toString('utf8') };
  return invalidUtf8(buf);
}

function invalidUtf8(b: Uint8Array): TextOrProblem {
  const bad = firstInvalidUtf8(b);
  const at = endOf(Buffer.from(b.buffer, b.byteOffset, bad).toString('utf8'));
  return {
    problem: `not readable: byte ${hex(b[bad])} is not UTF-8; kproxc reads UTF-8 text, or UTF-16 with a byte-order mark (was the file saved in another encoding?)`,
    ...at,
  };
}
