// The cost model's fit (scripts/bench-fit-model.mjs): it recovers the coefficients of loads
// made by a known model, keeps every coefficient at least zero when the data would pull
// one below, and writes a data module that the estimate reads.
import { describe, expect, it } from 'vitest';
import { CPU_TERMS, RSS_TERMS, fitCost, fitTerms, formatData, predict, termValue } from '../../scripts/bench-fit-model.mjs';
import { termValue as estimateTerm, type CostTerm } from '../../src/nft/load-cost.js';
import { NO_COUNTS, type RulesetCounts } from '../../src/nft/stats.js';

const counts = (chains: number, rules: number, elements: number, sets: number): RulesetCounts => ({
  ...NO_COUNTS,
  tables: 1,
  chains,
  rules,
  elements,
  sets,
  setSquares: sets ** 2,
  setSquareObjects: sets ** 2 * (chains + rules + sets + elements),
});

// Shapes whose proportions differ, as the fit's points do (sizes, endpoints, layouts, releases).
const SHAPES = [
  counts(1000, 3000, 500, 5),
  counts(5000, 9000, 6000, 2500),
  counts(12000, 26000, 13000, 2600),
  counts(3000, 6500, 14000, 2500),
  counts(57000, 128000, 64000, 13000),
  counts(15000, 32000, 69000, 12600),
  counts(0, 0, 200000, 1),
  counts(114000, 346000, 27000, 9),
];

describe('bench-fit: least squares, every coefficient at least zero', () => {
  it('recovers the model that made the loads', () => {
    const truth = { chains: 1e-5, rules: 2e-5, elements: 1e-5, setSquares: 2e-8, setSquareObjects: 2e-12 };
    const rows = SHAPES.map((c) => ({ counts: c, cpu: predict(truth, c), rssMB: 10 + c.rules / 300 }));
    const fit = fitTerms(rows, CPU_TERMS, 'cpu');
    for (const r of rows) expect(predict(fit, r.counts) / r.cpu).toBeCloseTo(1, 6);
    for (const [term, k] of Object.entries(truth)) expect(fit[term] / k).toBeCloseTo(1, 4);
  });

  it('keeps a coefficient at zero rather than below it', () => {
    // Loads that fall as chains grow: an unconstrained fit would give chains a negative cost.
    const rows = SHAPES.map((c) => ({ counts: c, cpu: Math.max(0.05, 1 + c.rules * 1e-5 - c.chains * 1e-6), rssMB: 10 }));
    const { cpu, rss } = fitCost(rows);
    for (const k of [...Object.values(cpu), ...Object.values(rss)]) expect(k).toBeGreaterThanOrEqual(0);
  });

  it('fits the terms the estimate reads, each of the same figure', () => {
    for (const term of new Set([...CPU_TERMS, ...RSS_TERMS])) {
      for (const c of SHAPES) expect(termValue(term, { ...c, maps: 3, anonymousSets: 7 })).toBe(estimateTerm(term as CostTerm, { ...c, maps: 3, anonymousSets: 7 }));
    }
  });

  it('writes the data module with how it was fitted', () => {
    const text = formatData({ cpu: { rules: 1.23456e-5 }, rss: { constant: 4.5 } }, { machine: 'a machine', command: 'node scripts/bench-fit.mjs', date: '2026-01-01', points: 'a; b' });
    expect(text).toContain('// `node scripts/bench-fit.mjs` on 2026-01-01');
    expect(text).toContain('// Points: a;\n//   b.');
    expect(text).toContain('cpu: { rules: 0.00001235 },');
    expect(text).toContain('rss: { constant: 4.5 },');
  });
});
