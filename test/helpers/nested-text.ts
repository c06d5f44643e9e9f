// The reference printer of the nested full replace (src/nft/nested-text.ts): tables printed
// from their statements, object by object, the plain way. The compiler prints the same
// bytes from tables kept as text (src/nft/text-table.ts, text-writer.ts); the tests hold
// the two equal.
import type { TableContents } from '../../src/nft/ruleset.js';
import { StringOut } from '../../src/nft/expr-text.js';
import { tableWords, writeElementBlock, writeElementLine, writeRule } from '../../src/nft/text.js';
import {
  CHAIN_BLOCK_CLOSE,
  RULE_INDENT,
  TABLE_BLOCK_CLOSE,
  removalLines,
  tableBlockOpen,
  writeChainBlockOpen,
  writeSetInBlock,
} from '../../src/nft/nested-text.js';

/**
 * The full replace of these tables in the nested syntax, from their statements; with
 * `elementBlocks`, each set's elements in one command (fast-load's text form).
 */
export function fullReplaceText(tables: TableContents[], elementBlocks = false): string {
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
      if (elementBlocks && s.elements.length > 0) {
        writeElementBlock(o, words, s.set, s.elements);
        o.str('\n');
        continue;
      }
      if (elementBlocks) continue;
      for (const e of s.elements) {
        writeElementLine(o, 'add', words, s.set, e);
        o.str('\n');
      }
    }
  }
  return o.text;
}

/**
 * A full replace with each `add element` command of many elements (fast-load's text form)
 * turned into one command per element, the form kube-proxy's layout prints: for tests that
 * read elements line by line.
 */
export function flatElements(text: string): string {
  return text.replace(/^(add element \S+ \S+ \S+) \{\n((?:\t.*\n)*?)\}$/gm, (_, head: string, body: string) =>
    body
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => `${head} { ${l.slice(1).replace(/,$/, '')} }`)
      .join('\n'),
  );
}
