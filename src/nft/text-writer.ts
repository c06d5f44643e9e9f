// A full replace of tables kept as text (text-table.ts), as chunks of UTF-8 bytes made
// while it is written out. The table holds its lines printed already, as strings of one
// character per byte (latin1); here they are gathered in order, joined, and copied into
// the chunks. Nothing is printed here but the table and chain lines, from their names.
import { ByteChunks, type ChunkWriter } from '../io/byte-chunks.js';
import type { PrintedItems, TableText } from './text-table.js';
import { chainAddLine, tableLine, tableWords } from './text.js';

// Lines that follow one another in their piece are gathered in runs of up to this many bytes.
const RUN_BYTES = 1 << 13;

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

/** Text as its UTF-8 bytes, one character each (latin1): what ByteChunks.lines() takes. */
function latin1OfUtf8(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}
