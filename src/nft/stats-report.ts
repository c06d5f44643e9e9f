// `compile --stats` as printed on standard error: per layout, what its ruleset holds and
// the estimated cost of loading it (load-cost.ts), the layout compiled first. As text, a
// table for a person deciding which layout to load; as JSON, one line that begins
// `{"stats"`, for scripts (scripts/bench-fit.mjs reads the counts from it).
import { LOAD_COST } from './load-cost-data.js';
import { estimateLoad, type LoadCostModel, type LoadEstimate } from './load-cost.js';
import type { RulesetCounts } from './stats.js';

export interface LayoutStats {
  layout: string;
  /** The layout the command compiled (the others were compiled only to be counted). */
  compiled: boolean;
  counts: RulesetCounts;
  estimate: LoadEstimate;
}

export function layoutStats(layout: string, compiled: boolean, counts: RulesetCounts, model: LoadCostModel = LOAD_COST): LayoutStats {
  return { layout, compiled, counts, estimate: estimateLoad(counts, model) };
}

/** Seconds as a person reads a wait: tenths under ten seconds, minutes from two. */
export function duration(s: number): string {
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

export function megabytes(mb: number): string {
  return mb < 1024 ? `${Math.round(mb)} MB` : `${(mb / 1024).toFixed(1)} GB`;
}

const COLUMNS: [string, (s: LayoutStats) => string][] = [
  ['layout', (s) => (s.compiled ? `${s.layout} (compiled)` : s.layout)],
  ['tables', (s) => String(s.counts.tables)],
  ['chains', (s) => String(s.counts.chains)],
  ['rules', (s) => String(s.counts.rules)],
  ['sets', (s) => String(s.counts.sets)],
  ['maps', (s) => String(s.counts.maps)],
  ['anonymous sets', (s) => String(s.counts.anonymousSets)],
  ['elements', (s) => String(s.counts.elements)],
  ['nft -f CPU (est.)', (s) => `~${duration(s.estimate.cpuSeconds)}`],
  ['nft memory (est.)', (s) => `~${megabytes(s.estimate.peakMB)}`],
];

/** The stats as a table of lines, numbers right-aligned. */
export function statsText(stats: readonly LayoutStats[]): string {
  const cells = stats.map((s) => COLUMNS.map(([, f]) => f(s)));
  const widths = COLUMNS.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    ('  ' + c.map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ')).trimEnd();
  return [
    'stats: what each layout\'s ruleset holds, and the estimated cost of loading it fresh with nft -f on this kind of machine',
    line(COLUMNS.map(([h]) => h)),
    ...cells.map(line),
    '',
  ].join('\n');
}

/** The stats as one line of JSON. */
export function statsJson(stats: readonly LayoutStats[]): string {
  return JSON.stringify({ stats: { layouts: stats } }) + '\n';
}
