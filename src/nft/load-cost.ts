// An estimate of what `nft -f` of a ruleset costs on this kernel, in CPU time (user +
// system of nft) and nft's peak memory, from what the ruleset holds (stats.ts): a sum of
// per-item terms, whose coefficients `node scripts/bench-fit.mjs` fits on real loads
// (load-cost-data.ts). The terms are per chain, rule, element and set, and for CPU the
// square of each table's sets, alone and times the table's objects (stats.ts says why);
// no term names a layout, so the model holds for any table
// the compiler builds, and a new layout needs at most a refit.
import { LOAD_COST } from './load-cost-data.js';
import type { RulesetCounts } from './stats.js';

/** The counts a term multiplies: one of RulesetCounts', or all sets and maps together. */
export type CostTerm = 'constant' | 'chains' | 'rules' | 'elements' | 'allSets' | 'setSquares' | 'setSquareObjects';

export type Coefficients = Partial<Record<CostTerm, number>>;

export interface LoadCostModel {
  /** Seconds of CPU per item. */
  cpu: Coefficients;
  /** MB of nft's peak RSS per item. */
  rss: Coefficients;
}

export interface LoadEstimate {
  cpuSeconds: number;
  peakMB: number;
}

/** The figure a term multiplies, for a ruleset. */
export function termValue(term: CostTerm, n: RulesetCounts): number {
  switch (term) {
    case 'constant':
      return 1;
    case 'allSets':
      return n.sets + n.maps + n.anonymousSets;
    default:
      return n[term];
  }
}

function sum(c: Coefficients, n: RulesetCounts): number {
  let total = 0;
  for (const [term, k] of Object.entries(c) as [CostTerm, number][]) total += k * termValue(term, n);
  return total;
}

/**
 * The estimate for a ruleset. Every coefficient is at least zero (the fit keeps them so),
 * so more of anything never costs less.
 */
export function estimateLoad(n: RulesetCounts, model: LoadCostModel = LOAD_COST): LoadEstimate {
  return { cpuSeconds: sum(model.cpu, n), peakMB: sum(model.rss, n) };
}
