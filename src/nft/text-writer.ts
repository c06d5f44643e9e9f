// A full replace of tables kept as text (text-table.ts), printed as chunks of UTF-8 bytes
// while it is written out: the bytes of each rule are copied as they were printed, after
// its chain's "add rule" head, which is encoded once per chain.
import type { TableText } from './text-table.js';
import { tableLine, tableWords, writeElementLine, writeSetAdd } from './text.js';
import { Utf8Out } from './utf8-out.js';

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
export class ByteChunks extends Utf8Out {
  constructor(private readonly sink: ByteSink) {
    super();
    this.buf = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  }

  /** Ends a line; a chunk ends only here. */
  endLine(): void {
    this.byte(0x0a);
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  /** Copies lines that end with their line end. */
  lines(src: Uint8Array, start: number, end: number): void {
    this.bytes(src, start, end);
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  line(s: string): void {
    this.str(s);
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
  protected room(need: number): void {
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
      const { pieces, piece, start, end } = t.chainLines;
      for (let i = 0; i < t.chains.length; i++) out.lines(pieces[piece[i]], start[i], end[i]);
      for (const s of t.sets) {
        writeSetAdd(out, words, s.set);
        out.endLine();
      }
      writeRules(out, t, utf8(`add rule ${words} `));
      for (const s of t.sets) {
        for (const e of s.elements) {
          writeElementLine(out, 'add', words, s.set, e);
          out.endLine();
        }
      }
    }
    out.finish();
  };
}

function writeRules(out: ByteChunks, t: TableText, ruleHead: Uint8Array): void {
  const { pieces, piece, start, end, first } = t.rules;
  const lines = t.chainLines;
  let head = new Uint8Array(ruleHead.length + 256);
  head.set(ruleHead);
  for (let i = 0; i < t.chains.length; i++) {
    if (first[i] === first[i + 1]) continue;
    // "add rule FAMILY TABLE CHAIN ", the name copied from the chain's line, made once
    // for the chain's rules.
    const nameStart = lines.start[i] + t.nameAt;
    const nameEnd = nameStart + t.chains[i].name.length;
    const headEnd = ruleHead.length + (nameEnd - nameStart) + 1;
    if (headEnd > head.length) {
      head = new Uint8Array(2 * headEnd);
      head.set(ruleHead);
    }
    head.set(lines.pieces[lines.piece[i]].subarray(nameStart, nameEnd), ruleHead.length);
    head[headEnd - 1] = 0x20; // ' '
    for (let k = first[i]; k < first[i + 1]; k++) {
      out.bytes(head, 0, headEnd);
      out.bytes(pieces[piece[k]], start[k], end[k]);
      out.endLine();
    }
  }
}

function utf8(s: string): Uint8Array {
  const b = Buffer.from(s, 'utf8');
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}
