// Rule text read back into statements (src/nft/text-read.ts): the inverse of the printer,
// on every rule the fixtures compile to and on random statements.
import * as fs from 'node:fs';
import fc from 'fast-check';
import { ruleStmts } from '../../src/nft/objects.js';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { StatementStore } from '../../src/nft/ruleset.js';
import { PrintedStore } from '../../src/nft/text-table.js';
import { ruleKey, stmtsKey } from '../../src/nft/canonical.js';
import type { Family } from '../../src/nft/expr.js';
import { ruleBodyText } from '../../src/nft/text.js';
import { readRuleText } from '../../src/nft/text-read.js';
import { listFixtures } from '../helpers/fixtures.js';
import { parseArgsToOptions } from '../helpers/options.js';
import { stmtsArb } from '../helpers/stmts.js';

describe('reading kproxc rule text back', () => {
  it('every rule of every fixture reads back to statements with the same key', () => {
    let rules = 0;
    for (const f of listFixtures()) {
      const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
      // The tables that keep statements, and the printed ones the diff compares (their
      // rules are text only).
      for (const form of ['statements', 'printed'] as const) {
        const tables = form === 'statements' ? compileTables(model, { tableName: 'kube-proxy' }, [], StatementStore) : compileTables(model, { tableName: 'kube-proxy' }, [], PrintedStore);
        for (const t of tables) {
          for (const c of t.chains) {
            for (const r of c.rules) {
              const text = 'text' in r.body ? r.body.text : ruleBodyText(ruleStmts(r));
              const back = readRuleText(text);
              expect(back, text).not.toBeNull();
              expect(ruleBodyText(back!)).toBe(text);
              // A rule kept as text has its key made from the statements read back.
              if (form === 'statements') expect(ruleKey({ chain: c.chain.name, body: { text }, comment: r.comment }, t.table.family)).toBe(ruleKey(r, t.table.family));
              rules++;
            }
          }
        }
      }
    }
    expect(rules).toBeGreaterThan(500);
  });

  it('random statements print and read back to the same key', () => {
    fc.assert(
      fc.property(stmtsArb, fc.constantFrom<Family>('ip', 'ip6'), (stmts, family) => {
        const text = ruleBodyText(stmts);
        const back = readRuleText(text);
        expect(back, text).not.toBeNull();
        expect(ruleBodyText(back!)).toBe(text);
        expect(stmtsKey(back!, undefined, family)).toBe(stmtsKey(stmts, undefined, family));
      }),
      fcParams(2000),
    );
  });

  it('text kproxc does not print is not read', () => {
    for (const text of [
      '',
      ' ',
      'jump',
      'ip saddr',
      'ip saddr 010.0.0.1 drop',
      'ip saddr 10.0.0.0/33 drop',
      'ip saddr { 10.0.0.1 10.0.0.2 } drop',
      'ip saddr 10.0.0.1  drop',
      'tcp dport 080 drop',
      'mark and 0x4000 == 0 return',
      'mark == 0 return',
      'mark set mark and 0x00004000',
      'dnat to 10.0.0.1',
      'dnat to [10.0.0.1]:80',
      'dnat to fd00::1:80',
      'ct state established',
      'meta l4proto icmp',
      'iifname eth0 accept',
      'numgen random mod 2 vmap { 1 : drop }',
      'update @s ip saddr',
      'counter drop',
      'drop drop extra',
    ]) {
      expect(readRuleText(text), text).toBeNull();
    }
  });
});
