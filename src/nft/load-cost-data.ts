// The coefficients of the load cost model (load-cost.ts), as data. Fitted by
// `node scripts/bench-fit.mjs --sizes 200,1000,2000,5000,10000 --fast-load-sizes '10000x10:all,10000x10:none' --kube-proxy-max 10000 --write` on 2026-12-08: fresh `nft -f` loads of the benchmark's
// mix (scripts/gen-snapshot.mjs --mixed) in both layouts, each under GNU time in a private
// network namespace, on 2 CPUs (AMD EPYC), 24 GB, nftables v1.0.6 (Lester Gooch #5), kernel 6.18.44-fc-v1300.
// Points: fast-load at 200x10, 2000x1, 1000x10, 1000x10 (affinity on all), 2000x10, 1000x30, 5000x10, 10000x10, 10000x10 (affinity on all), 10000x10 (affinity on none);
//   kube-proxy 1.35 at 200x10, 2000x1, 1000x10, 1000x10 (affinity on all), 1000x30, 2000x10, 5000x10, 10000x10;
//   kube-proxy 1.37 at 200x10, 2000x1, 1000x10, 1000x10 (affinity on all), 1000x30, 2000x10, 5000x10, 10000x10;
//   one set of N elements at 50000, 200000.
// Least squares on each point's relative error, every coefficient at least zero
// (scripts/bench-fit-model.mjs); a term left out fitted best at zero. Refit after a
// layout changes what it makes: `node scripts/bench-fit.mjs --write`.
import type { LoadCostModel } from './load-cost.js';

export const LOAD_COST: LoadCostModel = {
  cpu: { rules: 0.00002757, elements: 0.000007459, allSets: 0.00002238, setSquares: 8.926e-8, setSquareObjects: 8.162e-13 },
  rss: { constant: 4.973, chains: 0.000292, rules: 0.003634, elements: 0.001327, allSets: 0.003584 },
};
