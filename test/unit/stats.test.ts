// `compile --stats`: the counts of every fixture's table, of every kind, against what its
// golden text holds, counted here from the text alone (a `chain` line per chain, a line
// per rule, an `add element` line per element, the items of each brace a rule writes);
// stdout the same with and without --stats; the estimate never falling when a count
// grows; the printed forms.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { LOAD_COST } from '../../src/nft/load-cost-data.js';
import { estimateLoad } from '../../src/nft/load-cost.js';
import { NO_COUNTS, textSets, type RulesetCounts } from '../../src/nft/stats.js';
import { layoutStats, statsJson, statsText, type LayoutStats } from '../../src/nft/stats-report.js';
import { GOLDEN, kindArgs, kindGolden, listFixtures } from '../helpers/fixtures.js';
import { fcParams } from '../helpers/fc-runs.js';
import { kproxc } from '../helpers/kproxc.js';

/** What a golden ruleset holds, read from its lines. */
function goldenCounts(text: string): Omit<RulesetCounts, 'setSquares' | 'setSquareObjects'> {
  const lines = text.split('\n');
  const n = { tables: 0, chains: 0, rules: 0, sets: 0, maps: 0, anonymousSets: 0, elements: 0 };
  let inChain = false;
  // In an `add element` command of many elements (fast-load): one element a line.
  let inElements = false;
  for (const line of lines) {
    if (line.startsWith('table ')) n.tables++;
    else if (line.startsWith('\tset ')) n.sets++;
    else if (line.startsWith('\tmap ')) n.maps++;
    else if (line.startsWith('add element ')) inElements = line.endsWith(' {') ? true : (n.elements++, false);
    else if (inElements) inElements = line === '}' ? false : (n.elements++, true);
    else if (line.startsWith('\tchain ')) [n.chains, inChain] = [n.chains + 1, true];
    else if (line === '\t}') inChain = false;
    else if (inChain && line.startsWith('\t\t') && !/^\t\t(type \S+ hook |comment ")/.test(line)) {
      n.rules++;
      // Braces that do not follow `@set` (an update's key), outside quotes: anonymous sets.
      for (const m of line.replace(/"[^"]*"/g, '').matchAll(/(@\S+ )?\{([^}]*)\}/g)) {
        if (m[1]) continue;
        n.anonymousSets++;
        n.elements += m[2].split(',').length;
      }
    }
  }
  return n;
}

const statsOf = (stderr: string): LayoutStats[] => JSON.parse(stderr.split('\n').find((l) => l.startsWith('{"stats"'))!).stats.layouts;

describe('compile --stats: counts', () => {
  const fixtures = listFixtures().filter((f) => fs.existsSync(path.join(GOLDEN, `${f.name}.nft`)) && !f.name.startsWith('api-server'));
  for (const kind of TABLE_KINDS) {
    it(`every fixture's ${kind.name} table holds what its golden text holds; stdout unchanged`, async () => {
      let counted = 0;
      for (const f of fixtures) {
        const rel = kindGolden(kind, f.name, 'nft');
        if (!fs.existsSync(path.join(GOLDEN, rel))) continue;
        const args = ['compile', f.file, ...f.args, ...kindArgs(kind)];
        const plain = await kproxc(args);
        const withStats = await kproxc([...args, '--stats-format', 'json']);
        expect(withStats.stdout, f.name).toBe(plain.stdout);
        expect(withStats.stdout, f.name).toBe(fs.readFileSync(path.join(GOLDEN, rel), 'utf8'));
        const [mine, other] = statsOf(withStats.stderr);
        expect([mine.layout, mine.compiled, other.compiled]).toEqual([kind.layout, true, false]);
        const { setSquares, setSquareObjects, ...counts } = mine.counts;
        expect(counts, f.name).toEqual(goldenCounts(plain.stdout));
        // Summed over the tables: at least what an even split of the sets would give.
        const perTable = (counts.sets + counts.maps + counts.anonymousSets) / counts.tables;
        const objects = (counts.chains + counts.rules + counts.sets + counts.maps + counts.anonymousSets + counts.elements) / counts.tables;
        expect(setSquares).toBeGreaterThanOrEqual(perTable ** 2 * counts.tables - 1e-6);
        expect(setSquareObjects).toBeGreaterThanOrEqual(setSquares);
        if (counts.tables === 1) expect(setSquareObjects).toBe(perTable ** 2 * objects);
        counted++;
      }
      expect(counted).toBeGreaterThan(10);
    });
  }

  it('counts the sets a rule writes, not a set update names, nor braces in quotes', () => {
    const into = { sets: 0, elements: 0 };
    textSets('update @affinity-x { ip saddr } comment "a { b, c }"', into);
    expect(into).toEqual({ sets: 0, elements: 0 });
    textSets('numgen random mod 3 vmap { 0 : goto a , 1 : goto b , 2 : goto c }', into);
    textSets('ip daddr { 10.0.0.0/8 } drop', into);
    expect(into).toEqual({ sets: 2, elements: 4 });
  });
});

describe('compile --stats: the estimate', () => {
  const keys = Object.keys(NO_COUNTS) as (keyof RulesetCounts)[];
  const counts = fc.record(Object.fromEntries(keys.map((k) => [k, fc.integer({ min: 0, max: 10_000_000 })])) as Record<keyof RulesetCounts, fc.Arbitrary<number>>);

  it('every coefficient is at least zero', () => {
    for (const c of [LOAD_COST.cpu, LOAD_COST.rss]) for (const v of Object.values(c)) expect(v).toBeGreaterThanOrEqual(0);
  });

  it('never falls when any one count grows', () => {
    fc.assert(
      fc.property(counts, fc.constantFrom(...keys), fc.integer({ min: 1, max: 1_000_000 }), (n, key, more) => {
        const [a, b] = [estimateLoad(n), estimateLoad({ ...n, [key]: n[key] + more })];
        expect(b.cpuSeconds).toBeGreaterThanOrEqual(a.cpuSeconds);
        expect(b.peakMB).toBeGreaterThanOrEqual(a.peakMB);
      }),
      fcParams(200),
    );
  });

  it('grows with each term the model has', () => {
    const model = { cpu: { constant: 1, chains: 2, rules: 3, elements: 4, allSets: 5, setSquares: 6, setSquareObjects: 7 }, rss: { constant: 10, chains: 20 } };
    const n = { ...NO_COUNTS, chains: 1, rules: 1, elements: 1, sets: 1, maps: 1, anonymousSets: 1, setSquares: 9, setSquareObjects: 54 };
    expect(estimateLoad(n, model)).toEqual({ cpuSeconds: 1 + 2 + 3 + 4 + 5 * 3 + 6 * 9 + 7 * 54, peakMB: 30 });
  });
});

describe('compile --stats: printed', () => {
  const n = (chains: number): RulesetCounts => ({ tables: 1, chains, rules: 2 * chains, sets: 3, maps: 5, anonymousSets: 7, elements: 11, setSquares: 225, setSquareObjects: 225 * (3 * chains + 26) });
  const model = { cpu: { chains: 0.01 }, rss: { constant: 10, rules: 1 } };
  const stats = [layoutStats('kube-proxy', true, n(20000), model), layoutStats('fast-load', false, n(100), model)];

  it('as a table, the layout compiled first, times in seconds or minutes', () => {
    expect(statsText(stats)).toBe(
      [
        "stats: what each layout's ruleset holds, and the estimated cost of loading it fresh with nft -f on this kind of machine",
        '  layout                 tables  chains  rules  sets  maps  anonymous sets  elements  nft -f CPU (est.)  nft memory (est.)',
        '  kube-proxy (compiled)       1   20000  40000     3     5               7        11           ~3.3 min           ~39.1 GB',
        '  fast-load                   1     100    200     3     5               7        11             ~1.0 s            ~210 MB',
        '',
      ].join('\n'),
    );
  });

  it('as one line of JSON', () => {
    const line = statsJson(stats);
    expect(line.endsWith('}\n') && !line.slice(0, -1).includes('\n')).toBe(true);
    expect(JSON.parse(line)).toEqual({ stats: { layouts: stats } });
    expect(stats[1].estimate).toEqual({ cpuSeconds: 1, peakMB: 210 });
  });

  it('on standard error, after the warnings; refused for the ovs backend', async () => {
    const [f] = listFixtures().filter((x) => x.name === 'dual-stack');
    const r = await kproxc(['compile', f.file, ...f.args, '--stats']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^stats: what each layout's ruleset holds/m);
    expect(r.stderr).toMatch(/^ {2}kube-proxy \(compiled\) +2 /m);
    expect(r.stderr).toMatch(/^ {2}fast-load +2 /m);
    const ovs = await kproxc(['compile', f.file, ...f.args, '--backend', 'ovs', '--stats']);
    expect(ovs.code).toBe(2);
    expect(ovs.stderr).toContain('--stats applies to the nftables backend');
  });
});
