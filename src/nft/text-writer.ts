// A full replace of tables kept as text (text-table.ts), printed as chunks of UTF-8 bytes
// while it is written out: the bytes of each rule are copied as they were printed, after
// its chain's "add rule" head, which is encoded once per chain.
import { InternalError } from '../diag/diagnostic.js';
import type { TableText } from './text-table.js';
import { chainAddLine, elementLine, setAddLine, tableLine, tableWords } from './text.js';

// Chunks of about this many bytes are handed over.
const CHUNK_BYTES = 1 << 18;

/** Hands chunks of bytes over one at a time; each is valid only until the sink returns. */
export type ByteSink = (chunk: Uint8Array) => void;

/** Output that is written as it is made: chunks of bytes handed to a sink, one at a time. */
export type ChunkWriter = (sink: ByteSink) => void;

/**
 * Text and bytes turned into chunks of UTF-8 bytes, each ending at a line end, written
 * straight into one buffer used again for every chunk. A large ruleset is hundreds of
 * megabytes: it is never one string, and it never piles up as buffers either (V8 counts
 * their memory and answers with full collections of the heap, about one per 64 MB written).
 */
export class ByteChunks {
  private buf = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  private at = 0;

  constructor(private readonly sink: ByteSink) {}

  /** Appends text, UTF-8 encoded. */
  text(s: string): void {
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (3 * s.length > this.buf.length - this.at) this.grow(3 * s.length);
    this.at += this.buf.write(s, this.at);
  }

  /** Appends bytes from start to end (exclusive). */
  bytes(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (n > this.buf.length - this.at) this.grow(n);
    const b = this.buf;
    // Below a few dozen bytes a loop copies sooner than a subarray and set.
    if (n > 40) b.set(src.subarray(start, end), this.at);
    else for (let i = start, at = this.at; i < end; i++) b[at++] = src[i];
    this.at += n;
  }

  /** Ends a line; a chunk ends only here. */
  endLine(): void {
    if (this.at === this.buf.length) this.grow(1);
    this.buf[this.at++] = 0x0a;
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  line(s: string): void {
    this.text(s);
    this.endLine();
  }

  finish(): void {
    this.flush();
  }

  private flush(): void {
    if (this.at === 0) return;
    this.sink(this.buf.subarray(0, this.at));
    this.at = 0;
  }

  /** A line longer than a chunk: a larger buffer, with the line so far. */
  private grow(need: number): void {
    const b = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + need));
    this.buf.copy(b, 0, 0, this.at);
    this.buf = b;
  }
}

/**
 * fullReplace of tables as text, the same as transactionText(fullReplace(tables)) of the
 * same tables built with their statements, as chunks of bytes when the writer runs.
 */
export function fullReplaceBytes(tables: TableText[]): ChunkWriter {
  return (sink) => {
    const out = new ByteChunks(sink);
    for (const t of tables) {
      const words = tableWords(t.table);
      // As fullReplace: the table made if missing and deleted, then made again with everything in it.
      const ref = { family: t.table.family, name: t.table.name };
      out.line(tableLine('add', ref));
      out.line(tableLine('delete', ref));
      out.line(tableLine('add', t.table));
      const names = new NameBytes(t.chains.map((c) => c.name));
      const chainHead = utf8Bytes(`add chain ${words} `);
      for (let i = 0; i < t.chains.length; i++) {
        const c = t.chains[i];
        if (c.base || c.comment !== undefined) out.line(chainAddLine(words, c));
        else {
          out.bytes(chainHead, 0, chainHead.length);
          out.bytes(names.bytes, names.start[i], names.start[i + 1]);
          out.endLine();
        }
      }
      for (const s of t.sets) out.line(setAddLine(words, s.set));
      writeRules(out, t, names, utf8Bytes(`add rule ${words} `));
      for (const s of t.sets) for (const e of s.elements) out.line(elementLine('add', words, s.set, e));
    }
    out.finish();
  };
}

function writeRules(out: ByteChunks, t: TableText, names: NameBytes, ruleHead: Uint8Array): void {
  const { pieces, piece, start, end, first } = t.rules;
  let head = new Uint8Array(ruleHead.length + 256);
  head.set(ruleHead);
  for (let i = 0; i < t.chains.length; i++) {
    if (first[i] === first[i + 1]) continue;
    // "add rule FAMILY TABLE CHAIN ", made once for the chain's rules.
    const nameLength = names.start[i + 1] - names.start[i];
    const headEnd = ruleHead.length + nameLength + 1;
    if (headEnd > head.length) {
      head = new Uint8Array(2 * headEnd);
      head.set(ruleHead);
    }
    head.set(names.bytes.subarray(names.start[i], names.start[i + 1]), ruleHead.length);
    head[headEnd - 1] = 0x20; // ' '
    for (let k = first[i]; k < first[i + 1]; k++) {
      out.bytes(head, 0, headEnd);
      out.bytes(pieces[piece[k]], start[k], end[k]);
      out.endLine();
    }
  }
}

/**
 * Chain names as bytes, encoded in one go: name i is bytes from start[i] to start[i + 1].
 * Each is printed once in its "add chain" line and once more in each of its rules' heads.
 */
class NameBytes {
  readonly bytes: Uint8Array;
  readonly start: Int32Array;

  constructor(names: string[]) {
    this.start = new Int32Array(names.length + 1);
    for (let i = 0; i < names.length; i++) this.start[i + 1] = this.start[i] + names[i].length;
    const all = Buffer.from(names.join(''), 'utf8');
    // Chain names are ASCII (objects.ts checks them): one byte for each character.
    if (all.length !== this.start[names.length]) throw new InternalError('a chain name is not ASCII');
    this.bytes = new Uint8Array(all.buffer, all.byteOffset, all.length);
  }
}

function utf8Bytes(s: string): Uint8Array {
  const b = Buffer.from(s, 'utf8');
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}
