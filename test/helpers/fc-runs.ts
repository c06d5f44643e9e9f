// How many runs a fast-check property makes. Each property names its full count: the
// strong check, which `npm test` (and so CI) runs, and `npm run fuzz` ten times over. A
// contributor's quick run (`npm run test:unit`, or vitest by hand) caps every property at
// 100 runs, which finds most breakage in a fraction of the time. FC_RUNS chooses:
//
//   unset   at most 100 runs a property
//   full    each property's own count
//   10x     ten times each property's own count (any whole factor)
//   500     500 runs for every property
//
// FC_SEED=n replays a failed run (fast-check prints the seed and path when one fails).
//
// The same switch sizes the tests that are slow by their size alone (a hundred thousand
// names, rules enough for many pieces of a store, every fixture): unset, a size that still
// reaches every branch the test is about; set to anything, the full size.

const QUICK = 100;

/** The runs of a property whose full count is `full`, as `env` (FC_RUNS's value) asks. */
export function fcRuns(full: number, env: string | undefined): number {
  const v = env?.trim();
  if (!v) return Math.min(full, QUICK);
  if (v === 'full') return full;
  const factor = /^([1-9][0-9]*)x$/.exec(v);
  if (factor) return full * Number(factor[1]);
  if (/^[1-9][0-9]*$/.test(v)) return Number(v);
  throw new Error(`FC_RUNS: unset, full, a factor such as 10x or a number of runs, not ${JSON.stringify(v)}`);
}

/** The size of a stress test whose full size is `full`: `quick` when `env` (FC_RUNS's value) is unset or empty. */
export function sizeFor(full: number, quick: number, env: string | undefined): number {
  return env?.trim() ? full : quick;
}

/** Whether stress tests run at their full size (FC_RUNS set). */
export function fcFullSize(): boolean {
  return sizeFor(1, 0, process.env.FC_RUNS) === 1;
}

/** The size FC_RUNS asks for of a stress test whose full size is `full`. */
export function fcSize(full: number, quick: number): number {
  return sizeFor(full, quick, process.env.FC_RUNS);
}

/** The seed FC_SEED asks for, or undefined for a fresh one. */
export const fcSeed: number | undefined = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;

/** fast-check's parameters for a property whose full count is `full`. */
export function fcParams(full: number): { numRuns: number; seed?: number } {
  const numRuns = fcRuns(full, process.env.FC_RUNS);
  return fcSeed === undefined ? { numRuns } : { numRuns, seed: fcSeed };
}
