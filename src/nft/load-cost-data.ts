// Placeholder until the first fit.
import type { LoadCostModel } from './load-cost.js';

export const LOAD_COST: LoadCostModel = {
  cpu: { constant: 0.01, chains: 2e-5, rules: 1e-5, elements: 1e-6, setSquares: 1e-8 },
  rss: { constant: 10, chains: 0.01, rules: 0.001, elements: 0.0005 },
};
