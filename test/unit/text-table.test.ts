// The table kept only to be printed (rules as UTF-8 text, not statements) prints exactly
// what the table with statements prints through fullReplaceText: the
// statements stay the one source of every rule's text.
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fcSize } from '../helpers/fc-runs.js';
import { compileFamily } from '../../src/backends/nftables/index.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { ruleBodyText } from '../../src/nft/text.js';
import { fullReplaceText } from '../helpers/nested-text.js';
import { fullReplaceBytes } from '../../src/nft/text-writer.js';
import { ElementBlockTextStore, PrintedStore, TextStore, type TableText } from '../../src/nft/text-table.js';
import { StatementStore, TableBuilder, statementsBuilder, type TableContents } from '../../src/nft/ruleset.js';
import type { Table } from '../../src/nft/objects.js';
import { printedRules } from '../../src/live/view.js';
import { ruleStmts, type Chain, type NewRule } from '../../src/nft/objects.js';
import { AddressPortRule } from '../../src/nft/rule-template.js';
import { eq, jump, meta, payload } from '../../src/nft/expr.js';
import { parseIP } from '../../src/net/ip.js';
import { listFixtures } from '../helpers/fixtures.js';
import { parseArgsToOptions } from '../helpers/options.js';

const textBuilder = (t: Table) => new TableBuilder(t, new TextStore());
const printedBuilder = (t: Table) => new TableBuilder(t, new PrintedStore());

/** The chunks a writer hands over, joined; checks that every chunk ends a line. */
function printed(tables: TableText[]): string {
  const chunks: Buffer[] = [];
  fullReplaceBytes(tables)((c) => {
    expect(c[c.length - 1]).toBe(0x0a);
    chunks.push(Buffer.from(c));
  });
  return Buffer.concat(chunks).toString('utf8');
}

/** Chains with each rule's text and comment, through PrintedRules and through the rules; sets as they are. */
function described(t: TableContents) {
  return {
    chains: t.chains.map((c) => {
      const p = printedRules(c);
      const viaPrinted = Array.from({ length: p.count }, (_, k) => [p.text(k), p.comment(k)]);
      const viaRules = c.rules.map((r) => ['text' in r.body ? r.body.text : ruleBodyText(ruleStmts(r)), r.comment]);
      expect(viaRules).toEqual(viaPrinted);
      return { chain: c.chain, rules: viaPrinted };
    }),
    sets: t.sets,
  };
}

describe('text tables', () => {
  for (const f of listFixtures()) {
    it(`print as the statements do: ${f.name}`, () => {
      const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
      const text = printed(model.families.map((m) => compileFamily(m, { tableName: 'kube-proxy' }, [], new TextStore())));
      expect(text).toBe(fullReplaceText(compileTables(model, { tableName: 'kube-proxy' }, [], StatementStore)));
      // fast-load's text form: each set's elements in one command.
      const opts = { tableName: 'kube-proxy', layout: 'fast-load' as const };
      const blocks = printed(model.families.map((m) => compileFamily(m, opts, [], new ElementBlockTextStore())));
      expect(blocks).toBe(fullReplaceText(compileTables(model, opts, [], StatementStore), true));
    });
  }

  it('keep long rules, non-ASCII comments and many rules in order', () => {
    const table = { family: 'ip' as const, name: 't', comment: 'c' };
    const text = textBuilder(table);
    const stmts = statementsBuilder(table);
    const mid = `mid-${'x'.repeat(40)}`;
    const chains: Chain[] = [{ name: 'zeta' }, { name: 'alpha', comment: 'ünïcödé' }, { name: mid }, { name: 'empty' }];
    for (const c of chains) {
      text.chain(c);
      stmts.chain(c);
    }
    // Enough rules to fill several pieces of the rule store, one longer than a piece, and
    // rules of one chain interleaved with another's.
    // A quick run (FC_RUNS unset) makes a fifth as many, still several pieces.
    const count = fcSize(150_000, 30_000);
    const targets = Array.from({ length: 30000 }, () => ({ kind: 'goto' as const, target: mid }));
    const rules: NewRule[] = [];
    for (let i = 0; i < count; i++) {
      if (i === Math.floor((count * 7) / 15)) rules.push({ chain: 'zeta', stmts: [{ t: 'numgen-vmap', mod: targets.length, targets }] });
      rules.push({ chain: i % 3 === 0 ? 'alpha' : 'zeta', stmts: [{ t: 'verdict', v: { kind: 'jump', target: mid } }], comment: i % 7 === 0 ? `ü ${i}` : undefined });
    }
    for (const r of rules) {
      if (r.comment === undefined) delete r.comment;
      text.rule(r);
      stmts.rule(r);
    }
    const withStatements = stmts.finish();
    // Read back as the diff does; and printed.
    const again = printedBuilder(table);
    for (const c of chains) again.chain(c);
    for (const r of rules) again.rule(r);
    expect(described(again.finish())).toEqual(described(withStatements));
    const t = text.finish();
    expect(t.chains.pieces.length).toBeGreaterThan(4);
    expect(printed([t])).toBe(fullReplaceText([stmts.finish()]));
  });

  it('refuse a rule of a chain not made, whatever came before', () => {
    const table: Table = { family: 'ip', name: 't' };
    for (const b of [textBuilder(table), printedBuilder(table), statementsBuilder(table)]) {
      expect(() => b.rule({ chain: '', stmts: [{ t: 'reject' }] })).toThrow('missing chain');
      b.chain({ name: 'a' });
      b.rule({ chain: 'a', stmts: [{ t: 'reject' }] });
      expect(() => b.rule({ chain: 'b', stmts: [{ t: 'reject' }] })).toThrow('missing chain b');
      expect(() => b.rule({ chain: '', stmts: [{ t: 'reject' }] })).toThrow('missing chain');
    }
  });

  it('print template rules as their statements print, for both families and among other rules', () => {
    for (const family of ['ip', 'ip6'] as const) {
      const table = { family, name: 't' };
      const text = textBuilder(table);
      const stmts = statementsBuilder(table);
      const hairpin = new AddressPortRule((ip) => [eq(payload(family, 'saddr'), { t: 'ip', ip }), jump('mark')]);
      const dnat = new AddressPortRule((ip, port) => [eq(meta('l4proto'), { t: 'sym', s: 'udp' }), { t: 'dnat', ip, port }]);
      const addresses = family === 'ip' ? ['10.0.0.1', '192.168.255.254', '1.2.3.4'] : ['fd00::1', '2001:db8::ff:1', '::ffff:1.2.3.4'];
      for (const b of [text, stmts]) {
        b.chain({ name: 'mark' });
        addresses.forEach((a, i) => {
          const chain = `ep-${i}`;
          b.chain({ name: chain });
          b.templateRule(chain, hairpin, parseIP(a)!, 0);
          b.rule({ chain, stmts: [{ t: 'reject' }] });
          b.templateRule(chain, dnat, parseIP(a)!, [1, 80, 65535][i]);
        });
      }
      const withStatements = stmts.finish();
      expect(printed([text.finish()])).toBe(fullReplaceText([stmts.finish()]));
      // The diff's table reads each rule's text back from its line: the same text.
      const readBack = printedBuilder(table);
      readBack.chain({ name: 'mark' });
      addresses.forEach((a, i) => {
        readBack.chain({ name: `ep-${i}` });
        readBack.templateRule(`ep-${i}`, hairpin, parseIP(a)!, 0);
        readBack.templateRule(`ep-${i}`, dnat, parseIP(a)!, [1, 80, 65535][i]);
      });
      const kept = readBack.finish().chains.flatMap((c) => c.rules.map((r) => ('text' in r.body ? r.body.text : undefined)));
      const expected = withStatements.chains.flatMap((c) => c.rules.filter((r) => ruleStmts(r)[0].t !== 'reject').map((r) => ruleBodyText(ruleStmts(r))));
      expect(kept).toEqual(expected);
    }
  });

  for (const f of listFixtures()) {
    it(`read back as the diff reads them, rule by rule: ${f.name}`, () => {
      const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
      const printed = compileTables(model, { tableName: 'kube-proxy' }, [], PrintedStore);
      // Both in the order made.
      const statements = compileTables(model, { tableName: 'kube-proxy' }, [], StatementStore);
      expect(printed.map(described)).toEqual(statements.map(described));
    });
  }

  it('check a template rule as any rule: references, and a template that does not print its values as values', () => {
    const b = textBuilder({ family: 'ip', name: 't' });
    b.chain({ name: 'a' });
    const toMissing = new AddressPortRule((ip) => [eq(payload('ip', 'saddr'), { t: 'ip', ip }), jump('missing')]);
    b.templateRule('a', toMissing, parseIP('10.0.0.1')!, 1);
    b.templateRule('a', toMissing, parseIP('10.0.0.2')!, 1);
    expect(() => b.finish()).toThrow('refers to missing chain missing');
    // A chain named after the address: the pieces would print every rule with the first one's name.
    const c = textBuilder({ family: 'ip', name: 't' });
    c.chain({ name: 'a' });
    c.chain({ name: 'to-1' });
    const named = new AddressPortRule((ip) => [jump(`to-${ip.bytes[3]}`)]);
    expect(() => c.templateRule('a', named, parseIP('10.0.0.1')!, 1)).toThrow('rule template prints');
    expect(() => c.templateRule('b', named, parseIP('10.0.0.1')!, 1)).toThrow('missing chain b');
    // One that happens to print its first use right is still found out.
    c.chain({ name: 'to-0' });
    expect(() => c.templateRule('a', named, parseIP('10.0.0.0')!, 1)).toThrow('rule template prints');
  });
});
