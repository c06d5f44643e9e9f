// System test on the real kernel: every golden file, in every layout, loads into a private
// network namespace. The text golden loads (twice, listing the same, leaving a foreign
// table alone), nft lists every rule exactly in the canonical JSON form our writer produces
// (what `diff` relies on), and `diff` against it is empty; the JSON golden loads with
// `nft -j -f` and lists its rules as written too, and the same as the text when it holds
// the same tables (fast-load's JSON keeps kube-proxy's affinity sets, which its text does
// not).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileFamily } from '../../../src/backends/nftables/index.js';
import { TABLE_KINDS, type OutputFormat, type TableKind } from '../../../src/backends/nftables/layout.js';
import { loadModel } from '../../../src/compile.js';
import { StatementStore, type TableContents } from '../../../src/nft/ruleset.js';
import { canonicalStmt } from '../../../src/nft/canonical.js';
import { ruleStmts } from '../../../src/nft/objects.js';
import type { Json } from '../../../src/nft/expr-json.js';
import { stmtJson, transactionJson } from '../../../src/nft/json.js';
import { fullReplace } from '../../../src/nft/transaction.js';
import { GOLDEN, jsonFromGolden, kindArgs, kindGolden, listFixtures, type Fixture } from '../../helpers/fixtures.js';
import { kproxc } from '../../helpers/kproxc.js';
import { canonicalListing, withNetns } from '../../helpers/netns.js';
import { parseArgsToOptions } from '../../helpers/options.js';

const fixtures = listFixtures();

/** The listing without comments that nft's JSON input cannot carry on 1.0.6. */
function withoutObjectComments(listing: unknown): unknown {
  return (listing as Record<string, Record<string, unknown>>[]).map((x) => {
    const kind = Object.keys(x)[0];
    if (kind === 'rule') return x;
    const { comment: _c, ...rest } = x[kind];
    return { [kind]: rest };
  });
}

/**
 * What nft lists of every rule is the rule as our writer renders it to JSON; address sets
 * compare as the intervals they match, since nft merges overlapping ranges.
 */
function expectListedAsWritten(tables: TableContents[], listing: string): void {
  const live = JSON.parse(listing).nftables as Record<string, Record<string, unknown>>[];
  for (const t of tables) {
    for (const c of t.chains) {
      const liveRules = live
        .filter((x) => x.rule && x.rule.family === t.table.family && x.rule.chain === c.chain.name)
        .map((x) => ({ expr: (x.rule.expr as Json[]).map(canonicalStmt), comment: x.rule.comment }));
      const ours = c.rules.map((r) => ({ expr: ruleStmts(r).map((s) => canonicalStmt(stmtJson(s, t.table.family))), comment: r.comment }));
      expect(liveRules, `chain ${t.table.family} ${c.chain.name}`).toEqual(ours);
    }
  }
}

/** The fixture's tables in a layout, as compile makes them for one format. */
function tablesOf(f: Fixture, kind: TableKind, format: OutputFormat): TableContents[] {
  const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
  return model.families.map((m) => compileFamily(m, { tableName: 'kube-proxy', layout: kind.layout, version: kind.version, format }, [], new StatementStore()));
}

const readGolden = (rel: string) => fs.readFileSync(path.join(GOLDEN, rel), 'utf8');

describe('golden rulesets load into real nft', () => {
  for (const kind of TABLE_KINDS) {
    describe(kind.name, () => {
      for (const f of fixtures) {
        it(f.name, async () => {
          const text = readGolden(kindGolden(kind, f.name, 'nft'));
          const json = readGolden(kindGolden(kind, f.name, 'json'));
          const textTables = tablesOf(f, kind, 'text');
          const listing = await withNetns('lm', (ns) => {
            ns.exec('nft', ['add', 'table', 'inet', 'foreign']);
            ns.exec('nft', ['add', 'chain', 'inet', 'foreign', 'c']);
            ns.nft(['-f', '-'], text);
            const listed = ns.nft(['-j', 'list', 'ruleset']);
            const first = canonicalListing(listed);
            ns.nft(['-f', '-'], text);
            expect(canonicalListing(ns.nft(['-j', 'list', 'ruleset']))).toEqual(first);
            expect(ns.nft(['list', 'tables'])).toContain('table inet foreign');
            expectListedAsWritten(textTables, listed);

            for (const t of textTables) ns.nft(['delete', 'table', t.table.family, t.table.name]);
            ns.nft(['-j', '-f', '-'], json);
            const fromJson = ns.nft(['-j', 'list', 'ruleset']);
            expectListedAsWritten(tablesOf(f, kind, 'json'), fromJson);
            if (jsonFromGolden(json) === transactionJson(fullReplace(textTables))) {
              expect(withoutObjectComments(canonicalListing(fromJson))).toEqual(withoutObjectComments(first));
            }
            return listed;
          });
          const diff = await kproxc(['diff', ...kindArgs(kind), '--live', '-', f.file, ...f.args], listing);
          expect(diff.code, diff.stderr).toBe(0);
          expect(diff.stdout).toBe('');
        });
      }
    });
  }
});
