// System test on the real kernel: every golden ruleset loads with `nft -f` into a private
// network namespace, loading it twice lists the same, the --format json output loaded with
// `nft -j -f` lists the same as the text form, and every rule we print is listed by nft in
// exactly the canonical JSON form our writer produces (what `diff` relies on).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileTables, loadModel } from '../src/compile.js';
import type { TableContents } from '../src/nft/ruleset.js';
import { canonicalStmt } from '../src/nft/canonical.js';
import { ruleStmts } from '../src/nft/objects.js';
import type { Json } from '../src/nft/expr-json.js';
import { stmtJson } from '../src/nft/json.js';
import { GOLDEN, listFixtures } from './helpers/fixtures.js';
import { kproxc } from './helpers/kproxc.js';
import { canonicalListing, withNetns } from './helpers/netns.js';
import { parseArgsToOptions } from './helpers/options.js';

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

describe('golden rulesets load into real nft', () => {
  for (const f of fixtures) {
    it(f.name, async () => {
      const text = fs.readFileSync(path.join(GOLDEN, `${f.name}.nft`), 'utf8');
      const json = (await kproxc(['compile', f.file, ...f.args, '--format', 'json'])).stdout;
      await withNetns('load', (ns) => {
        ns.exec('nft', ['add', 'table', 'inet', 'foreign']);
        ns.exec('nft', ['add', 'chain', 'inet', 'foreign', 'c']);
        ns.nft(['-f', '-'], text);
        const first = canonicalListing(ns.nft(['-j', 'list', 'ruleset']));
        ns.nft(['-f', '-'], text);
        const second = canonicalListing(ns.nft(['-j', 'list', 'ruleset']));
        expect(second).toEqual(first);
        expect(ns.nft(['list', 'tables'])).toContain('table inet foreign');

        const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
        const tables = compileTables(model, 'kube-proxy', []);
        expectListedAsWritten(tables, ns.nft(['-j', 'list', 'ruleset']));

        for (const t of tables) ns.nft(['delete', 'table', t.table.family, t.table.name]);
        ns.nft(['-j', '-f', '-'], json);
        const fromJson = canonicalListing(ns.nft(['-j', 'list', 'ruleset']));
        expect(withoutObjectComments(fromJson)).toEqual(withoutObjectComments(first));
      });
    });
  }
});

// The fast-load layout of every fixture: its text loads and lists as written (the
// table-wide affinity set's statements included), `diff` against it is empty, and its JSON
// (which keeps kube-proxy's affinity sets) loads.
describe('every fixture in the fast-load layout loads into real nft', () => {
  for (const f of fixtures) {
    it(f.name, async () => {
      const text = await kproxc(['compile', '--layout', 'fast-load', f.file, ...f.args]);
      const json = await kproxc(['compile', '--layout', 'fast-load', '--format', 'json', f.file, ...f.args]);
      expect(text.code, text.stderr).toBe(0);
      expect(json.code, json.stderr).toBe(0);
      const listing = await withNetns('fl-load', (ns) => {
        ns.nft(['-f', '-'], text.stdout);
        const listed = ns.nft(['-j', 'list', 'ruleset']);
        const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
        expectListedAsWritten(compileTables(model, 'kube-proxy', [], 'fast-load'), listed);
        ns.exec('nft', ['flush', 'ruleset']);
        ns.nft(['-j', '-f', '-'], json.stdout);
        return listed;
      });
      const diff = await kproxc(['diff', '--layout', 'fast-load', '--live', '-', f.file, ...f.args], listing);
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toBe('');
    });
  }
});
