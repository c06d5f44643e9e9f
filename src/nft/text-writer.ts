// A full replace of tables kept as text (text-table.ts), in the nested syntax
// (nested-text.ts), as chunks of UTF-8 bytes made while it is written out. The table holds
// its lines printed already, as strings of one character per byte (latin1); here they are
// gathered in order, joined, and copied into the chunks. Nothing is printed here but the
// lines that open and close the table's block.
import { ByteChunks, type ChunkWriter } from '../io/byte-chunks.js';
import type { PrintedItems, TableText } from './text-table.js';
import { CHAIN_BLOCK_CLOSE, TABLE_BLOCK_CLOSE, removalLines, tableBlockOpen } from './nested-text.js';

// Lines that follow one another in their piece are gathered in runs of up to this many bytes.
const RUN_BYTES = 1 << 13;

/**
 * The full replace of tables as text (nested-text.ts), as chunks of bytes when the writer
 * runs: the same bytes as the reference printer of the tests prints from the same tables
 * built with their statements.
 */
export function fullReplaceBytes(tables: TableText[]): ChunkWriter {
  return (sink) => {
    const out = new ByteChunks(sink);
    for (const t of tables) {
      out.lines(latin1OfUtf8(removalLines(t.table) + tableBlockOpen(t.table)));
      writeRuns(out, t.sets);
      writeRuns(out, t.chains);
      if (t.chainCount > 0) out.lines(CHAIN_BLOCK_CLOSE);
      out.lines(TABLE_BLOCK_CLOSE);
      writeRuns(out, t.elements);
    }
    out.finish();
  };
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
