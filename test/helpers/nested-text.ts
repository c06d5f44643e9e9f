// The reference printer of the nested full replace (src/nft/nested-text.ts): tables printed
// from their statements, object by object, the plain way. The compiler prints the same
// bytes from tables kept as text (src/nft/text-table.ts, text-writer.ts); the tests hold
// the two equal.
import type { TableContents } from '../../src/nft/ruleset.js';
import { StringOut } from '../../src/nft/expr-text.js';
import { tableWords, writeElementLine, writeRule } from '../../src/nft/text.js';
import {
  CHAIN_BLOCK_CLOSE,
  RULE_INDENT,
  TABLE_BLOCK_CLOSE,
  removalLines,
  tableBlockOpen,
  writeChainBlockOpen,
  writeSetInBlock,
} from '../../src/nft/nested-text.js';

/** The full replace of these tables in the nested syntax, from their statements. */
export function fullReplaceText(tables: TableContents[]): string {
  const o = new StringOut();
  for (const t of tables) {
    o.str(removalLines(t.table));
    o.str(tableBlockOpen(t.table));
    for (const s of t.sets) {
      writeSetInBlock(o, s.set);
      o.str('\n');
    }
    for (const c of t.chains) {
      writeChainBlockOpen(o, c.chain);
      for (const r of c.rules) {
        o.str(RULE_INDENT);
        writeRule(o, r);
        o.str('\n');
      }
      o.str(CHAIN_BLOCK_CLOSE);
    }
    o.str(TABLE_BLOCK_CLOSE);
    const words = tableWords(t.table);
    for (const s of t.sets) {
      for (const e of s.elements) {
        writeElementLine(o, 'add', words, s.set, e);
        o.str('\n');
      }
    }
  }
  return o.text;
}
