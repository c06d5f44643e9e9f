// The least-squares fit of scripts/bench-fit.mjs: nft's CPU seconds and peak RSS as sums of
// per-item terms over what each loaded ruleset holds (src/nft/stats.ts counts it; the
// terms are src/nft/load-cost.ts's). Each point weighs by its relative error, so that a
// 0.2 s load counts as much as a 150 s one (the estimate is to hold within a factor of
// two at every size, not in seconds at the largest). Every coefficient is kept at least
// zero, so the estimate grows with every count: of all subsets of the terms, the one
// whose unconstrained fit is all non-negative and leaves the least error.

export const CPU_TERMS = ['constant', 'chains', 'rules', 'elements', 'allSets', 'setSquares', 'setSquareObjects'];
export const RSS_TERMS = ['constant', 'chains', 'rules', 'elements', 'allSets'];

// Below these a point's measure is mostly GNU time's rounding and nft's start-up: its
// relative error weighs as if it were this large.
const FLOOR = { cpu: 0.2, rssMB: 20 };

export function termValue(term, n) {
  if (term === 'constant') return 1;
  if (term === 'allSets') return n.sets + n.maps + n.anonymousSets;
  return n[term];
}

/** Solves A x = b (A square) by Gaussian elimination with partial pivoting; null when singular. */
function solve(a, b) {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    if (Math.abs(m[p][c]) < 1e-12) return null;
    [m[c], m[p]] = [m[p], m[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((row, i) => row[n] / row[i]);
}

/**
 * Weighted least squares over `terms`; columns are scaled to unit size first (the counts
 * run from 1 to 10^9), then the coefficients scaled back.
 */
function leastSquares(rows, terms, y, w) {
  const x = rows.map((r) => terms.map((t) => termValue(t, r.counts)));
  const scale = terms.map((_, j) => Math.max(...x.map((xi) => Math.abs(xi[j]))) || 1);
  const a = terms.map((_, i) => terms.map((_, j) => x.reduce((s, xi, k) => s + (w[k] * xi[i] * xi[j]) / (scale[i] * scale[j]), 0)));
  const b = terms.map((_, i) => x.reduce((s, xi, k) => s + (w[k] * xi[i] * y[k]) / scale[i], 0));
  const z = solve(a, b);
  return z && z.map((v, j) => v / scale[j]);
}

/** The fit of `key` (cpu or rssMB) over all non-negative subsets of `terms`. */
export function fitTerms(rows, terms, key) {
  const y = rows.map((r) => r[key]);
  const w = y.map((v) => 1 / Math.max(v, FLOOR[key]) ** 2);
  let best;
  for (let mask = 1; mask < 1 << terms.length; mask++) {
    const used = terms.filter((_, j) => mask & (1 << j));
    if (used.length > rows.length) continue;
    const k = leastSquares(rows, used, y, w);
    if (!k || k.some((v) => !(v >= 0))) continue;
    const coeffs = Object.fromEntries(used.map((t, j) => [t, k[j]]));
    const err = rows.reduce((s, r, i) => s + w[i] * (predict(coeffs, r.counts) - y[i]) ** 2, 0);
    if (!best || err < best.err) best = { coeffs, err };
  }
  if (!best) throw new Error(`no non-negative fit of ${key}`);
  return best.coeffs;
}

export function predict(coeffs, counts) {
  return Object.entries(coeffs).reduce((s, [t, k]) => s + k * termValue(t, counts), 0);
}

/** Both fits, and a table of each point's measure against its estimate. */
export function fitCost(rows) {
  const cpu = fitTerms(rows, CPU_TERMS, 'cpu');
  const rss = fitTerms(rows, RSS_TERMS, 'rssMB');
  const lines = [`${'point'.padEnd(34)}  chains   rules  elements   sets  set^2      CPU  estimate  ratio    peak  estimate  ratio`];
  for (const r of rows) {
    const n = r.counts;
    const [ec, em] = [predict(cpu, n), predict(rss, n)];
    const sets = n.sets + n.maps + n.anonymousSets;
    lines.push(
      [
        (r.probe ? r.layout : `${r.services}x${r.endpoints}${r.affinity ? ` aff-${r.affinity}` : ''} ${r.layout}${r.version ? ` ${r.version}` : ''}`).padEnd(34),
        String(n.chains).padStart(7),
        String(n.rules).padStart(7),
        String(n.elements).padStart(9),
        String(sets).padStart(6),
        n.setSquares.toExponential(1).padStart(7),
        `${r.cpu.toFixed(2)} s`.padStart(9),
        `${ec.toFixed(2)} s`.padStart(9),
        (ec / r.cpu).toFixed(2).padStart(6),
        `${r.rssMB} MB`.padStart(8),
        `${em.toFixed(0)} MB`.padStart(9),
        (em / r.rssMB).toFixed(2).padStart(6),
      ].join(' '),
    );
  }
  lines.push(`cpu (s per item): ${JSON.stringify(cpu)}`, `rss (MB per item): ${JSON.stringify(rss)}`);
  return { cpu, rss, report: lines.join('\n') };
}

const num = (v) => Number(v.toPrecision(4));
const coeffText = (c) =>
  Object.entries(c)
    .map(([t, k]) => `${t}: ${num(k)}`)
    .join(', ');

/** src/nft/load-cost-data.ts for a fit. */
export function formatData(fit, { machine, command, date, points }) {
  return `// The coefficients of the load cost model (load-cost.ts), as data. Fitted by
// \`${command}\` on ${date}: fresh \`nft -f\` loads of the benchmark's
// mix (scripts/gen-snapshot.mjs --mixed) in both layouts, each under GNU time in a private
// network namespace, on ${machine}.
// Points: ${points.split('; ').join(';\n//   ')}.
// Least squares on each point's relative error, every coefficient at least zero
// (scripts/bench-fit-model.mjs); a term left out fitted best at zero. Refit after a
// layout changes what it makes: \`node scripts/bench-fit.mjs --write\`.
import type { LoadCostModel } from './load-cost.js';

export const LOAD_COST: LoadCostModel = {
  cpu: { ${coeffText(fit.cpu)} },
  rss: { ${coeffText(fit.rss)} },
};
`;
}
