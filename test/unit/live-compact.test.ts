// The compact live read (src/live/compact/) against the checked reader (src/live/checked/),
// readLive: the same rules, sets and elements, and the same diff, on every
// captured listing; problems leave the listing to the checked reader.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileTables, loadModel } from '../../src/compile.js';
import { StatementStore } from '../../src/nft/ruleset.js';
import { PrintedStore } from '../../src/nft/text-table.js';
import { diffLive, diffTables } from '../../src/diff/diff.js';
import type { Family } from '../../src/nft/expr.js';
import { readLive } from '../../src/live/checked/reader.js';
import { compactView, type CompactRead } from '../../src/live/compact/table.js';
import { readCompactText } from '../../src/live/compact/start.js';
import { contentsView, ruleText, type LiveTableView } from '../../src/live/view.js';
import { transactionText } from '../../src/nft/text.js';
import { listDiffCases } from '../helpers/diff-cases.js';
import { ROOT } from '../helpers/kproxc.js';
import { parseArgsToOptions } from '../helpers/options.js';

const BOTH: Family[] = ['ip', 'ip6'];

/**
 * What a view holds, as plain data: chains with their rules (by name: the compact view keeps
 * them in the order listed, the long way's in name order), sets with their elements.
 */
function contents(v: LiveTableView) {
  const chains = Array.from({ length: v.chainCount }, (_, i) => ({
    name: v.chainName(i),
    base: v.chainBase(i),
    rules: v.rules(i).map((r) => ({ handle: r.handle, comment: r.comment, text: 'foreign' in r.body ? null : ruleText(r), foreign: 'foreign' in r.body ? r.body.foreign : undefined })),
  })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sets = v.sets.map((s) => ({ set: s.set, elements: s.keys.map((k, i) => ({ k, v: s.valueKey(i), e: s.element(i) })) }));
  return { table: v.table, chains, sets };
}

/** A listing read compactly, held to what the long way reads of it: the compact views' contents. */
function readAsTheLongWay(text: string) {
  const read = readCompactText(text, 'kube-proxy');
  expect(read).toMatchObject({ readable: true, problemsIn: [] });
  const long = readLive([text], 'live.json', { tableName: 'kube-proxy', families: BOTH });
  const got = read.tables.map((t) => contents(compactView(t)));
  expect(got).toEqual(long.map((t) => contents(contentsView(t))));
  return got;
}

/** The desired tables, keeping statements or printed (as the diff builds them). */
function compiled(file: string, args: string[], form: 'printed' | 'statements') {
  const model = loadModel([{ name: file, text: fs.readFileSync(file, 'utf8') }], parseArgsToOptions(args));
  return form === 'statements' ? compileTables(model, { tableName: 'kube-proxy', version: '1.35' }, [], StatementStore) : compileTables(model, { tableName: 'kube-proxy', version: '1.35' }, [], PrintedStore);
}

describe('the compact live read', () => {
  for (const c of listDiffCases()) {
    it(`${c.name}: reads as the long way reads, and diffs the same`, () => {
      const text = fs.readFileSync(c.liveFile, 'utf8');
      const read = readCompactText(text, 'kube-proxy');
      expect(read).toMatchObject({ readable: true, problemsIn: [] });
      const long = readLive([text], 'live.json', { tableName: 'kube-proxy', families: BOTH });
      expect(read.tables.map((t) => contents(compactView(t)))).toEqual(long.map((t) => contents(contentsView(t))));

      for (const form of ['printed', 'statements'] as const) {
        const desired = compiled(c.file, c.args, form);
        const families = desired.map((t) => t.table.family);
        const views = read.tables.filter((t) => families.includes(t.table.family)).map(compactView);
        const want = diffTables(desired, readLive([text], 'live.json', { tableName: 'kube-proxy', families }));
        const got = diffLive(desired, views);
        expect(transactionText(got.now)).toBe(transactionText(want.now));
        expect(transactionText(got.later)).toBe(transactionText(want.later));
      }
    });
  }

  const unchanged = () => JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/diff/unchanged.live.json'), 'utf8')) as { nftables: Record<string, Record<string, unknown>>[] };
  const ours = (x: Record<string, Record<string, unknown>>, kind: string) => x[kind] && x[kind].family === 'ip' && x[kind].table === 'kube-proxy';

  it('a problem in our table is left to the long way, which reports it', () => {
    const doc = unchanged();
    doc.nftables.push({ counter: { family: 'ip', table: 'kube-proxy', name: 'hits', handle: 999, packets: 0, bytes: 0 } });
    expect(readCompactText(nftLike(doc), 'kube-proxy')).toMatchObject({ readable: true, problemsIn: ['ip'], tables: [] });
  });

  it('a problem in the other family is only noted: the caller decides whether it matters', () => {
    const doc = unchanged();
    doc.nftables.push({ table: { family: 'ip6', name: 'kube-proxy', handle: 90 } });
    doc.nftables.push({ flowtable: { family: 'ip6', table: 'kube-proxy', name: 'ft', handle: 91 } });
    const read = readCompactText(nftLike(doc), 'kube-proxy');
    expect(read.problemsIn).toEqual(['ip6']);
    expect(read.tables.map((t) => t.table)).toEqual([{ family: 'ip', name: 'kube-proxy' }]);
  });

  it('rules read the long way (drift kproxc does not write) keep what the diff needs', () => {
    const doc = unchanged();
    const rule = doc.nftables.find((x) => ours(x, 'rule') && x.rule.chain === 'cluster-ips-check')!.rule;
    (rule.expr as unknown[]).splice(1, 0, { counter: { packets: 0, bytes: 0 } });
    const read = readCompactText(nftLike(doc), 'kube-proxy');
    const v = compactView(read.tables[0]);
    const i = Array.from({ length: v.chainCount }, (_, k) => v.chainName(k)).indexOf('cluster-ips-check');
    expect(v.rules(i)[0].body).toEqual({ foreign: { setRefs: ['cluster-ips'] } });
    expect(v.rules(i)[1].body).toHaveProperty('text');
  });

  it('comments beyond ASCII and rules enough for many joined pieces of text read as the long way reads them', () => {
    const doc = unchanged();
    const rule = doc.nftables.find((x) => ours(x, 'rule') && x.rule.chain === 'cluster-ips-check')!.rule;
    rule.comment = 'ünïcödé ✓';
    // Copies of a rule in a chain of their own, each with its own handle and comment.
    doc.nftables.push({ chain: { family: 'ip', table: 'kube-proxy', name: 'many', handle: 90000 } });
    for (let k = 0; k < 3000; k++) {
      doc.nftables.push({ rule: { ...rule, chain: 'many', handle: 90001 + k, comment: k % 2 ? `ü ${k}` : `plain ${k}` } });
    }
    const got = readAsTheLongWay(nftLike(doc));
    const many = got[0].chains.find((c) => c.name === 'many')!;
    expect(many.rules).toHaveLength(3000);
    expect(many.rules[2999].comment).toBe('ü 2999');
  });

  it('draws of one shape with and without an offset read as nft prints them: no `offset 0`', () => {
    const doc = unchanged();
    // fast-load's ClusterIP draws: a draw among three from 3, then the draw among one (offset 0).
    const draw = (mod: number, offset: number) => [
      { dnat: { family: 'ip', addr: { map: { key: { concat: [{ payload: { protocol: 'ip', field: 'daddr' } }, { payload: { protocol: 'tcp', field: 'dport' } }, { numgen: { mode: 'random', mod, offset } }] }, data: '@service-endpoints-tcp' } } } },
    ];
    doc.nftables.push({ chain: { family: 'ip', table: 'kube-proxy', name: 'dnat-cluster-ips', handle: 90000 } });
    [draw(3, 3), draw(1, 0), draw(2, 1)].forEach((expr, k) => doc.nftables.push({ rule: { family: 'ip', table: 'kube-proxy', chain: 'dnat-cluster-ips', handle: 90001 + k, expr } }));
    const got = readAsTheLongWay(nftLike(doc));
    expect(got[0].chains.find((c) => c.name === 'dnat-cluster-ips')!.rules.map((r) => r.text)).toEqual(
      [3, 1, 2].map((n) => `dnat ip addr . port to ip daddr . tcp dport . numgen random mod ${n}${n > 1 ? ` offset ${(n * (n - 1)) / 2}` : ''} map @service-endpoints-tcp`),
    );
  });

  it('rules listed chain by chain in another order than the chains, some chains without rules, read as the long way reads them', () => {
    const doc = unchanged();
    const items = doc.nftables;
    const rules = items.filter((x) => ours(x, 'rule'));
    const chainOrder = [...new Set(rules.map((x) => x.rule.chain as string))];
    // Each chain's rules together and in their order; the chains' runs backwards, and
    // every third chain's rules left out.
    const runs = chainOrder.reverse().filter((_, i) => i % 3 !== 1).map((name) => rules.filter((x) => x.rule.chain === name));
    doc.nftables = [...items.filter((x) => !ours(x, 'rule')), ...runs.flat()];
    expect(runs.length).toBeGreaterThan(10);
    const got = readAsTheLongWay(nftLike(doc));
    expect(got[0].chains.filter((c) => c.rules.length > 0)).toHaveLength(runs.length);
  });

  it('a live rule that differs from the wanted one only in a digit is a change, compared whole chain or rule by rule', () => {
    const doc = unchanged();
    const rule = doc.nftables.find((x) => ours(x, 'rule') && JSON.stringify(x.rule.expr).includes('"dnat"'))!.rule;
    const dnat = (rule.expr as { dnat?: { addr: string; port: number } }[]).find((e) => e.dnat)!.dnat!;
    dnat.port += dnat.port % 10 === 9 ? -1 : 1; // as many characters as before
    const text = nftLike(doc);
    const read = readCompactText(text, 'kube-proxy');
    const file = path.join(ROOT, 'fixtures/diff/unchanged.yaml');
    for (const form of ['printed', 'statements'] as const) {
      const desired = compiled(file, [], form);
      const got = transactionText(diffLive(desired, read.tables.map(compactView)).now);
      expect(got).toBe(transactionText(diffTables(desired, readLive([text], 'live.json', { tableName: 'kube-proxy', families: ['ip'] })).now));
      expect(got).toContain(`delete rule ip kube-proxy ${rule.chain as string} handle ${rule.handle as number}`);
    }
  });

  it('chains paired in the order made and listed give the diff that pairing them by name gives, whatever the two orders', () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const shuffled = <T>(xs: T[], moves: number): T[] => {
      const out = [...xs];
      for (let m = 0; m < moves; m++) {
        const a = random(out.length);
        const b = Math.min(out.length, a + 1 + random(12));
        // A run of chains moved elsewhere, or two swapped.
        if (m % 2) out.splice(random(out.length), 0, ...out.splice(a, b - a));
        else [out[a], out[b - 1]] = [out[b - 1], out[a]];
      }
      return out;
    };
    for (const c of listDiffCases().filter((d) => d.name !== 'no-table')) {
      const text = fs.readFileSync(c.liveFile, 'utf8');
      const read = readCompactText(text, 'kube-proxy');
      const desired = compiled(c.file, c.args, 'printed');
      const families = desired.map((t) => t.table.family);
      const views = read.tables.filter((t) => families.includes(t.table.family)).map(compactView);
      const byName = views.map((v) => Object.create(v, { listedOrder: { value: undefined } }) as LiveTableView);
      const want = transactionText(diffLive(desired, byName).now);
      expect(transactionText(diffLive(desired, views).now), c.name).toBe(want);
      for (const moves of [1, 3, 20, 200]) {
        const views2 = views.map((v) => {
          const order = shuffled(Array.from(v.listedOrder!()), moves);
          return Object.create(v, { listedOrder: { value: () => order } }) as LiveTableView;
        });
        const desired2 = desired.map((t) => ({ ...t, chains: shuffled(t.chains, moves) }));
        expect(transactionText(diffLive(desired2, views2).now), `${c.name}, ${moves} moves`).toBe(want);
      }
    }
  });

  it('a listing spaced otherwise is parsed whole, with the same result; text that is not JSON is not read', () => {
    const pretty = JSON.stringify(unchanged(), null, 2);
    const read = readCompactText(pretty, 'kube-proxy');
    const long = readLive([pretty], 'live.json', { tableName: 'kube-proxy', families: BOTH });
    expect(read.tables.map((t) => contents(compactView(t)))).toEqual(long.map((t) => contents(contentsView(t))));
    expect(readCompactText('table ip kube-proxy {\n}', 'kube-proxy').readable).toBe(false);
    expect(readCompactText('{"nftables": [{"table": {"family": "ip", "name": tru}}]}', 'kube-proxy').readable).toBe(false);
  });

  it('on a worker thread, the same as on this one (needs the build)', async () => {
    const built = path.join(ROOT, 'dist/live/compact/start.js');
    const { startCompactRead } = (await import(built)) as { startCompactRead: (f: string, t: string, m: string[], w: number) => { result(): Promise<CompactRead> } };
    const file = path.join(ROOT, 'fixtures/diff/drift-repaired.live.json');
    const viaWorker = await startCompactRead(file, 'kube-proxy', [], 0).result();
    const here = readCompactText(fs.readFileSync(file, 'utf8'), 'kube-proxy');
    expect(viaWorker.readable).toBe(true);
    expect(viaWorker.tables.map((t) => contents(compactView(t)))).toEqual(here.tables.map((t) => contents(compactView(t))));
  });
});

/** JSON spaced as nft prints it (the compact read cuts items where nft starts them). */
function nftLike(doc: unknown): string {
  const spaced = (j: unknown): string => {
    if (Array.isArray(j)) return `[${j.map(spaced).join(', ')}]`;
    if (j !== null && typeof j === 'object') return `{${Object.entries(j).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
    return JSON.stringify(j);
  };
  return spaced(doc) + '\n';
}
