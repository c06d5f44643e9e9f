// A full replace of tables kept as text (text-table.ts), as chunks of UTF-8 bytes made
// while it is written out. The table holds its lines printed already, as strings of one
// character per byte (latin1); here they are gathered in order, joined, and copied into
// the chunks. Nothing is printed here but the table and chain lines, from their names.
import type { PrintedItems, TableText } from './text-table.js';
import { chainAddLine, tableLine, tableWords } from './text.js';

// Chunks of about this many bytes are handed over.
const CHUNK_BYTES = 1 << 18;
// Gathered lines are joined and copied when they reach this many bytes: a larger string
// would be made in the old generation, where it stays until a full collection.
const GATHER_BYTES = 1 << 15;
// Lines that follow one another in their piece are gathered in runs of up to this many bytes.
const RUN_BYTES = 1 << 13;

/** Hands chunks of bytes over one at a time; each is valid only until the sink returns. */
export type ByteSink = (chunk: Uint8Array) => void;

/** Output that is written as it is made: chunks of bytes handed to a sink, one at a time. */
export type ChunkWriter = (sink: ByteSink) => void;

/**
 * Lines as bytes, one character each (latin1), turned into chunks of bytes that each end
 * at a line end, written into one buffer used again for every chunk. A large ruleset is
 * hundreds of megabytes: it is never one string, and it never piles up as buffers either
 * (V8 counts their memory and answers with full collections of the heap).
 */
export class ByteChunks {
  private buf = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  private at = 0;
  private gathered: string[] = [];
  private gatheredLength = 0;

  constructor(private readonly sink: ByteSink) {}

  /** Appends part of a line. */
  bytes(s: string): void {
    this.gathered.push(s);
    this.gatheredLength += s.length;
  }

  /** Appends lines, the last one's line end included. */
  lines(s: string): void {
    this.gathered.push(s);
    if ((this.gatheredLength += s.length) >= GATHER_BYTES) this.copyGathered();
  }

  /** Appends a line of any text, and its line end: encoded straight into the chunk. */
  textLine(s: string): void {
    if (this.gatheredLength > 0) this.copyGathered();
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    const most = 3 * s.length + 1;
    if (this.at + most > this.buf.length) {
      this.flush();
      if (most > this.buf.length) this.buf = Buffer.allocUnsafe(most);
    }
    this.at += this.buf.write(s, this.at, 'utf8');
    this.buf[this.at++] = 0x0a;
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  finish(): void {
    this.copyGathered();
    this.flush();
  }

  private copyGathered(): void {
    if (this.gatheredLength === 0) return;
    const s = this.gathered.join('');
    this.gathered = [];
    this.gatheredLength = 0;
    if (this.at + s.length > this.buf.length) {
      // Lines longer than a chunk: a larger buffer, with what it holds.
      const b = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + s.length));
      this.buf.copy(b, 0, 0, this.at);
      this.buf = b;
    }
    this.at += this.buf.write(s, this.at, 'latin1');
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  private flush(): void {
    if (this.at === 0) return;
    this.sink(this.buf.subarray(0, this.at));
    this.at = 0;
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
      out.lines(latin1OfUtf8(`${tableLine('add', ref)}\n${tableLine('delete', ref)}\n${tableLine('add', t.table)}\n`));
      writeChains(out, t, words);
      writeRuns(out, t.sets);
      writeRuns(out, t.rules);
      writeRuns(out, t.elements);
    }
    out.finish();
  };
}

function writeChains(out: ByteChunks, t: TableText, words: string): void {
  const head = latin1OfUtf8(`add chain ${words} `);
  for (const c of t.chains) {
    if (c.base || c.comment !== undefined) out.lines(latin1OfUtf8(`${chainAddLine(words, c)}\n`));
    else {
      // Chain names are ASCII (makeChain checks them): their characters are their bytes.
      out.bytes(head);
      out.bytes(c.name);
      out.lines('\n');
    }
  }
}

/** Printed lines in order; lines that follow one another in their piece go as one slice. */
function writeRuns(out: ByteChunks, items: PrintedItems): void {
  const { pieces, piece, start, end } = items;
  for (let k = 0; k < piece.length; ) {
    let j = k;
    while (j + 1 < piece.length && piece[j + 1] === piece[k] && start[j + 1] === end[j] && end[j + 1] - start[k] < RUN_BYTES) j++;
    out.lines(pieces[piece[k]].slice(start[k], end[j]));
    k = j + 1;
  }
}

/** Text as its UTF-8 bytes, one character each (latin1): what byteText() takes. */
function latin1OfUtf8(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}
