// The table kept only to be printed (rules as UTF-8 text, not statements) prints exactly
// what the table with statements prints through fullReplace and transactionText: the
// statements stay the one source of every rule's text.
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileFamilyTableText } from '../../src/backends/nftables/index.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { transactionText } from '../../src/nft/text.js';
import { fullReplaceBytes } from '../../src/nft/text-writer.js';
import { TextTableBuilder, type TableText } from '../../src/nft/text-table.js';
import { TableBuilder } from '../../src/nft/ruleset.js';
import { fullReplace } from '../../src/nft/transaction.js';
import type { Chain, Rule } from '../../src/nft/objects.js';
import { listFixtures } from '../helpers/fixtures.js';
import { parseArgsToOptions } from '../helpers/options.js';

/** The chunks a writer hands over, joined; checks that every chunk ends a line. */
function printed(tables: TableText[]): string {
  const chunks: Buffer[] = [];
  fullReplaceBytes(tables)((c) => {
    expect(c[c.length - 1]).toBe(0x0a);
    chunks.push(Buffer.from(c));
  });
  return Buffer.concat(chunks).toString('utf8');
}

describe('text tables', () => {
  for (const f of listFixtures()) {
    it(`print as the statements do: ${f.name}`, () => {
      const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
      const text = printed(model.families.map((m) => compileFamilyTableText(m, { tableName: 'kube-proxy' }, [])));
      expect(text).toBe(transactionText(fullReplace(compileTables(model, 'kube-proxy', []))));
    });
  }

  it('keep long rules, non-ASCII comments and many rules in order', () => {
    const table = { family: 'ip' as const, name: 't', comment: 'c' };
    const text = new TextTableBuilder(table);
    const stmts = new TableBuilder(table);
    const mid = `mid-${'x'.repeat(40)}`;
    const chains: Chain[] = [{ name: 'zeta' }, { name: 'alpha', comment: 'ünïcödé' }, { name: mid }, { name: 'empty' }];
    for (const c of chains) {
      text.chain(c);
      stmts.chain(c);
    }
    // Enough rules to fill several pieces of the rule store, one longer than a piece, and
    // rules of one chain interleaved with another's.
    const targets = Array.from({ length: 30000 }, () => ({ kind: 'goto' as const, target: mid }));
    const rules: Rule[] = [];
    for (let i = 0; i < 150000; i++) {
      if (i === 70000) rules.push({ chain: 'zeta', stmts: [{ t: 'numgen-vmap', mod: targets.length, targets }] });
      rules.push({ chain: i % 3 === 0 ? 'alpha' : 'zeta', stmts: [{ t: 'verdict', v: { kind: 'jump', target: mid } }], comment: i % 7 === 0 ? `ü ${i}` : undefined });
    }
    for (const r of rules) {
      if (r.comment === undefined) delete r.comment;
      text.rule(r);
      stmts.rule(r);
    }
    const t = text.finish();
    expect(t.rules.pieces.length).toBeGreaterThan(4);
    expect(printed([t])).toBe(transactionText(fullReplace([stmts.finish()])));
  });

  it('refuse a rule of a chain not made, whatever came before', () => {
    for (const b of [new TextTableBuilder({ family: 'ip', name: 't' }), new TableBuilder({ family: 'ip', name: 't' })]) {
      expect(() => b.rule({ chain: '', stmts: [{ t: 'reject' }] })).toThrow('missing chain');
      b.chain({ name: 'a' });
      b.rule({ chain: 'a', stmts: [{ t: 'reject' }] });
      expect(() => b.rule({ chain: 'b', stmts: [{ t: 'reject' }] })).toThrow('missing chain b');
      expect(() => b.rule({ chain: '', stmts: [{ t: 'reject' }] })).toThrow('missing chain');
    }
  });
});
