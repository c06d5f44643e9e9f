// A full replace of tables kept as text (text-table.ts), printed as chunks of UTF-8 bytes
// while it is written out: the bytes of each rule are copied as they were printed, after
// its chain's "add rule" head, which is encoded once per chain.
import type { TableText } from './text-table.js';
import { chainAddLine, tableLine, tableWords, writeElementLine, writeSetAdd } from './text.js';
import { Utf8Out } from './utf8-out.js';
import type { IP } from '../net/ip.js';

// Chunks of about this many bytes are handed over.
const CHUNK_BYTES = 1 << 18;
// Gathered lines are joined and copied when they reach this many bytes: a larger string
// would be made in the old generation, where it stays until a full collection.
const GATHER_BYTES = 1 << 15;
// Rule lines are gathered in runs of at most about this many bytes.
const RUN_BYTES = 1 << 13;

/** Hands chunks of bytes over one at a time; each is valid only until the sink returns. */
export type ByteSink = (chunk: Uint8Array) => void;

/** Output that is written as it is made: chunks of bytes handed to a sink, one at a time. */
export type ChunkWriter = (sink: ByteSink) => void;

/**
 * Text and bytes turned into chunks of UTF-8 bytes, each ending at a line end, written
 * straight into one buffer used again for every chunk. A large ruleset is hundreds of
 * megabytes: it is never one string, and it never piles up as buffers either (V8 counts
 * their memory and answers with full collections of the heap, about one per 64 MB written).
 *
 * Lines the text table keeps printed (strings of one character per byte) are gathered as
 * they are, then joined and copied into the chunk at once.
 */
export class ByteChunks extends Utf8Out {
  private gathered: string[] = [];
  private gatheredLength = 0;

  constructor(private readonly sink: ByteSink) {
    super();
    this.buf = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  }

  /** Appends part of a line that is bytes, one character each (latin1). */
  byteText(s: string): void {
    this.gathered.push(s);
    this.gatheredLength += s.length;
  }

  /** Ends a line of byteText(). */
  byteTextLineEnd(): void {
    this.byteLines('\n');
  }

  /** Appends lines that are bytes (latin1), the last one's line end included. */
  byteLines(s: string): void {
    this.gathered.push(s);
    if ((this.gatheredLength += s.length) >= GATHER_BYTES) this.copyGathered();
  }

  override str(s: string): void {
    if (this.gatheredLength > 0) this.copyGathered();
    super.str(s);
  }

  override num(n: number): void {
    if (this.gatheredLength > 0) this.copyGathered();
    super.num(n);
  }

  override ip(ip: IP): void {
    if (this.gatheredLength > 0) this.copyGathered();
    super.ip(ip);
  }

  override byte(c: number): void {
    if (this.gatheredLength > 0) this.copyGathered();
    super.byte(c);
  }

  /** Ends a line; a chunk ends only here. */
  endLine(): void {
    this.byte(0x0a);
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  line(s: string): void {
    this.str(s);
    this.endLine();
  }

  finish(): void {
    if (this.gatheredLength > 0) this.copyGathered();
    this.flush();
  }

  private copyGathered(): void {
    const s = this.gathered.join('');
    this.gathered = [];
    this.gatheredLength = 0;
    if (this.at + s.length > this.buf.length) this.room(s.length);
    this.at += this.buf.write(s, this.at, 'latin1');
    if (this.at >= CHUNK_BYTES) this.flush();
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
      // Chain names are ASCII (objects.ts checks them): as they are, one byte a character.
      const chainHead = latin1OfUtf8(`add chain ${words} `);
      for (const c of t.chains) {
        if (c.base || c.comment !== undefined) out.byteText(latin1OfUtf8(chainAddLine(words, c)));
        else {
          out.byteText(chainHead);
          out.byteText(c.name);
        }
        out.byteTextLineEnd();
      }
      for (const s of t.sets) {
        writeSetAdd(out, words, s.set);
        out.endLine();
      }
      writeRules(out, t);
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

function writeRules(out: ByteChunks, t: TableText): void {
  const { pieces, piece, start, end } = t.rules;
  // Lines that follow one another in their piece are handed over as one, up to a size.
  for (let k = 0; k < piece.length; ) {
    let j = k;
    while (j + 1 < piece.length && piece[j + 1] === piece[k] && start[j + 1] === end[j] && end[j + 1] - start[k] < RUN_BYTES) j++;
    out.byteLines(pieces[piece[k]].slice(start[k], end[j]));
    k = j + 1;
  }
}

/** Text as its UTF-8 bytes, one character each (latin1): what byteText() takes. */
function latin1OfUtf8(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}
