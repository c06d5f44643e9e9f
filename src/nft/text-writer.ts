// A full replace of tables kept as text (text-table.ts), in the nested syntax
// (nested-text.ts), as chunks of UTF-8 bytes made while it is written out. The table holds
// its lines printed already, as strings of one character per byte (latin1); here they are
// gathered in order, joined, and copied into the chunks. Nothing is printed here but the
// table's and chains' block lines.
import { ByteChunks, type ChunkWriter } from '../io/byte-chunks.js';
import type { PrintedItems, TableText } from './text-table.js';
import { StringOut } from './text.js';
import {
  CHAIN_BLOCK_CLOSE,
  TABLE_BLOCK_CLOSE,
  chainHasSpec,
  removalLines,
  tableBlockOpen,
  writeChainBlockOpen,
} from './nested-text.js';

// Lines that follow one another in their piece are gathered in runs of up to this many bytes.
const RUN_BYTES = 1 << 13;

/**
 * fullReplaceText of tables as text, the same as fullReplaceText of the same tables built
 * with their statements, as chunks of bytes when the writer runs.
 */
export function fullReplaceBytes(tables: TableText[]): ChunkWriter {
  return (sink) => {
    const out = new ByteChunks(sink);
    for (const t of tables) {
      out.lines(latin1OfUtf8(removalLines(t.table) + tableBlockOpen(t.table)));
      writeRuns(out, t.sets, 0, t.sets.piece.length);
      writeChains(out, t);
      out.lines(TABLE_BLOCK_CLOSE);
      writeRuns(out, t.elements, 0, t.elements.piece.length);
    }
    out.finish();
  };
}

/** Each chain's block: its opening lines, its rules' lines, its closing line. */
function writeChains(out: ByteChunks, t: TableText): void {
  const { chains, rules, ruleFirst } = t;
  for (let i = 0; i < chains.length; i++) {
    const c = chains[i];
    if (chainHasSpec(c)) out.lines(latin1OfUtf8(chainBlockOpen(c)));
    else {
      // Chain names are ASCII (makeChain checks them): their characters are their bytes.
      out.bytes(CHAIN_OPEN);
      out.bytes(c.name);
      out.lines(NAME_CLOSE);
    }
    writeRuns(out, rules, ruleFirst[i], ruleFirst[i + 1]);
    out.lines(CHAIN_BLOCK_CLOSE);
  }
}

const CHAIN_OPEN = '\tchain ';
const NAME_CLOSE = ' {\n';

function chainBlockOpen(c: TableText['chains'][number]): string {
  const o = new StringOut();
  writeChainBlockOpen(o, c);
  return o.text;
}

/** Printed lines from..to in order; lines that follow one another in their piece go as one slice. */
function writeRuns(out: ByteChunks, items: PrintedItems, from: number, to: number): void {
  const { pieces, piece, start, end } = items;
  for (let k = from; k < to; ) {
    let j = k;
    while (j + 1 < to && piece[j + 1] === piece[k] && start[j + 1] === end[j] && end[j + 1] - start[k] < RUN_BYTES) j++;
    out.lines(pieces[piece[k]].slice(start[k], end[j]));
    k = j + 1;
  }
}

/** Text as its UTF-8 bytes, one character each (latin1): what ByteChunks.lines() takes. */
function latin1OfUtf8(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}
