// The benchmark runs end to end at a tiny size: snapshots generated as YAML and JSON, the
// built binary compiled with both backends, the ruleset compiled in both layouts and each
// loaded by real nft in a private namespace, fresh, listed, again over itself, and updated
// by the diff loop for one moved endpoint (list, diff, nft -f), fast-load and the map-only
// table loaded fresh and listed again with nft's malloc on huge pages, and a diff against the
// kube-proxy layout's listing; the ovs bundle loaded into a private
// Open vSwitch and the ovs diff against its dumps. Nothing here looks at timings.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeCluster } from '../../scripts/gen-snapshot.mjs';
import { mapOnlyTable } from '../../scripts/map-only-table.mjs';
import { ROOT } from '../helpers/kproxc.js';

interface LoadRow {
  size: number;
  layout: string;
  mode: string;
  wallMedian: number;
  cpuMedian: number;
  runs: number;
  cachedRuns: number;
  listingBytes?: number;
  steps?: Record<string, number>;
  diffLines?: number;
  diffOperations?: number;
}

const MODES = ['fresh', 'replace', 'list', 'diff loop', 'diff loop, piped', 'fresh, huge pages', 'list, huge pages'];
const HUGE_PAGES = (mode: string) => mode.endsWith(', huge pages');
const LOOP = (mode: string) => mode.startsWith('diff loop');

/**
 * The load rows, mode by mode: the map-only yardstick is loaded and listed, never diffed;
 * the kube-proxy layout is not loaded again with huge pages (a quarter of an hour at 10k).
 */
const MODE_ROWS = (size: number, layouts = ['kube-proxy', 'fast-load', 'map-only']) =>
  MODES.flatMap((mode) =>
    layouts
      .filter((layout) => (!LOOP(mode) || layout !== 'map-only') && (!HUGE_PAGES(mode) || layout !== 'kube-proxy'))
      .map((layout) => `${size} ${layout} ${mode}`),
  );

/** The list rows say what was listed; the diff loop rows, their steps, which add up to no more than the whole. */
function checkModeDetail(row: LoadRow): void {
  if (row.mode.startsWith('list')) expect(row.listingBytes).toBeGreaterThan(0);
  else expect(row.listingBytes).toBeUndefined();
  if (!LOOP(row.mode)) return expect(row.steps).toBeUndefined();
  // Piped, the listing and the diff are one step: nft and kproxc run side by side.
  const steps = Object.values(row.steps!);
  expect(Object.keys(row.steps!)).toEqual(row.mode === 'diff loop' ? ['list', 'diff', 'apply'] : ['list | diff', 'apply']);
  for (const t of steps) expect(t).toBeGreaterThan(0);
  expect(steps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(row.wallMedian + 1e-3);
  // One endpoint moved: a few lines, not the table; at least as many operations as lines.
  expect(row.diffLines).toBeGreaterThan(0);
  expect(row.diffLines).toBeLessThan(60);
  expect(row.diffOperations).toBeGreaterThanOrEqual(row.diffLines!);
  expect(row.diffOperations).toBeLessThan(120);
}
interface LoadRatio {
  size: number;
  mode: string;
  over: string;
  under: string;
  sideBySide: boolean;
  wall: number;
  cpu: number | null;
}

function bench(dir: string, args: string[]) {
  const json = path.join(dir, 'report.json');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/bench.mjs'), '--runs', '1', '--dir', dir, '--json', json, ...args], { encoding: 'utf8', cwd: ROOT });
  expect(r.stderr).not.toMatch(/Error/);
  expect(r.status).toBe(0);
  // The namespaces were the benchmark's own, and it removed them.
  expect(spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout).not.toContain(`kproxc-bench-${r.pid}-`);
  return { ...r, report: JSON.parse(fs.readFileSync(json, 'utf8')) };
}

/** The runs of a layout the benchmark cached in `dir` at 200 Services. */
const cachedRuns = (dir: string, layout: string) => JSON.parse(fs.readFileSync(path.join(dir, `load-200x10-${layout}.json`), 'utf8')).runs;

/**
 * Each ratio over / under is the median of the two runs' ratios (their mean), read here from
 * the cached runs, and is printed; a run whose CPU rounded to 0 in GNU time's hundredths
 * gives none, and the line says so.
 */
function checkRatios(dir: string, ratios: LoadRatio[], stdout: string): void {
  for (const q of ratios) {
    const [a, b] = [cachedRuns(dir, q.over), cachedRuns(dir, q.under)];
    const of = (key: 'wall' | 'cpu') => {
      const q2 = [0, 1].map((i) => a[i][q.mode][key] / b[i][q.mode][key]).filter(Number.isFinite);
      return q2.reduce((x, y) => x + y, 0) / q2.length;
    };
    expect(q.wall).toBeCloseTo(of('wall'), 9);
    const line = `${q.over} / ${q.under} at 200 Services, ${q.mode}: `;
    if (q.cpu === null) {
      expect(stdout).toContain(`${line}no ratio (under 0.01 s) in CPU time`);
      continue;
    }
    expect(q.cpu).toBeCloseTo(of('cpu'), 9);
    expect(stdout).toContain(`${line}${q.cpu.toFixed(2)}x in CPU time, ${q.wall.toFixed(2)}x in wall time`);
  }
}

/** Runs fn with a fresh benchmark directory, removed after it. */
function inBenchDir(fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-perf-bench-'));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('npm run bench', () => {
  it('measures compile, ovs compile, nft -f and diff, and writes its table as JSON', () => {
    inBenchDir((dir) => {
      const { report, stdout } = bench(dir, ['--sizes', '12']);
      const commands = report.rows.map((x: { format: string; command: string }) => `${x.format} ${x.command}`);
      expect(commands).toEqual([
        'yaml compile',
        'yaml compile --layout fast-load',
        'yaml compile --backend ovs',
        'yaml ovs diff (1 endpoint moved)',
        'yaml ovs diff (1 Service removed)',
        'yaml diff (1 endpoint moved)',
        'json compile',
        'json compile --layout fast-load',
        'json compile --backend ovs',
        'json ovs diff (1 endpoint moved)',
        'json ovs diff (1 Service removed)',
        'json diff (1 endpoint moved)',
      ]);
      for (const row of report.rows) {
        expect(row.size).toBe(12);
        expect(row.rssMB).toBeGreaterThan(0);
        // CPU of all the process's threads, read from GNU time (NaN if it were misread).
        expect(row.cpuMedian).toBeGreaterThan(0);
        expect(row.outputBytes).toBeGreaterThan(0);
        // Each nftables compile run follows a run of the calibration workload; each ovs
        // compile and nftables diff run, a run of the nftables compile; each ovs diff run,
        // a run of the ovs compile (against a private Open vSwitch's dumps).
        const ovsDiff = row.command.startsWith('ovs diff');
        expect(row.pairedWith).toBe(row.command === 'compile' ? 'calibration' : ovsDiff ? 'ovs compile' : 'compile');
        if (ovsDiff) expect(row.bundleLines).toBeGreaterThan(0);
        expect(row.pairedMedian).toBeGreaterThan(0);
        expect(row.vsPaired).toBeGreaterThan(0);
      }
      // Both layouts and the map-only yardstick loaded fresh, listed, loaded again, and the
      // layouts updated by the diff loop, each timed by GNU time.
      expect(report.nft.map((x: LoadRow) => `${x.size} ${x.layout} ${x.mode}`)).toEqual(MODE_ROWS(12));
      for (const row of report.nft) {
        expect(row.wallMedian).toBeGreaterThan(0);
        expect(row.cpuMedian).toBeGreaterThanOrEqual(0);
        checkModeDetail(row);
      }
      expect(report.nftRatios.map((x: LoadRatio) => `${x.over} / ${x.under} ${x.mode}`)).toEqual([
        'kube-proxy / fast-load fresh',
        'kube-proxy / fast-load replace',
        'kube-proxy / fast-load list',
        'kube-proxy / fast-load diff loop',
        'kube-proxy / fast-load diff loop, piped',
        'fast-load / map-only fresh',
        'fast-load / map-only replace',
        'fast-load / map-only list',
        'fast-load / map-only fresh, huge pages',
        'fast-load / map-only list, huge pages',
      ]);
      expect(stdout).toContain('fast-load / map-only at 12 Services, fresh: ');
      expect(stdout).toMatch(/^12 +fast-load +diff loop .* list \d+\.\d\d s \+ diff \d+\.\d\d s \+ nft -f \d+\.\d\d s; \d+ lines, \d+ operations$/m);
      expect(stdout).toMatch(/^12 +fast-load +diff loop, piped .* list \| diff \d+\.\d\d s \+ nft -f \d+\.\d\d s; \d+ lines, \d+ operations$/m);
      // The diff for one moved endpoint is small; the compile is the whole table.
      const size = (command: string) => report.rows.find((x: { format: string; command: string }) => x.format === 'yaml' && x.command === command).outputBytes;
      expect(size('diff (1 endpoint moved)')).toBeLessThan(size('compile') / 2);
      expect(stdout).toContain('kube-proxy / fast-load at 12 Services, fresh: ');
      expect(stdout).toContain('CPU median');
      expect(stdout).toContain('x calibration (');
      expect(stdout).toContain('x compile (');
      // Both formats give the same ruleset.
      expect(fs.readFileSync(path.join(dir, 'out/compile-12.yaml.nft'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'out/compile-12.json.nft'), 'utf8'));
    });
  });
});

describe('npm run bench, the two layouts', () => {
  it('loads both, fresh and as a replace, prints their ratio, and takes the figures from the cache when run again', () => {
    inBenchDir((dir) => {
      const args = ['--sizes', '200', '--formats', 'yaml', '--no-ovs', '--load-runs', '2'];
      const first = bench(dir, [...args, '--layouts', 'kube-proxy,fast-load']);
      const rows: LoadRow[] = first.report.nft;
      expect(rows.map((x) => `${x.size} ${x.layout} ${x.mode}`)).toEqual(MODE_ROWS(200, ['kube-proxy', 'fast-load']));
      for (const row of rows) {
        expect(row.runs).toBe(2);
        expect(row.cachedRuns).toBe(0);
        // CPU (user + system) read from GNU time: a load, or a diff loop, of 200 Services is not free.
        if (!row.mode.startsWith('list')) expect(row.cpuMedian).toBeGreaterThan(0);
        expect(row.wallMedian).toBeGreaterThan(0);
        checkModeDetail(row);
      }
      // Each layout ran twice, back to back with the other.
      expect(cachedRuns(dir, 'kube-proxy')).toHaveLength(2);
      const ratios: LoadRatio[] = first.report.nftRatios;
      expect(ratios.map((x) => `${x.size} ${x.over} / ${x.under} ${x.mode}`)).toEqual(
        ['fresh', 'replace', 'list', 'diff loop', 'diff loop, piped'].map((mode) => `200 kube-proxy / fast-load ${mode}`),
      );
      expect(ratios.every((q) => q.sideBySide)).toBe(true);
      checkRatios(dir, ratios, first.stdout);
      // The rulesets loaded are `compile --layout`'s, and the two differ.
      const ruleset = (layout: string) => fs.readFileSync(path.join(dir, `out/layout-200.${layout}.nft`), 'utf8');
      expect(ruleset('kube-proxy')).toBe(fs.readFileSync(path.join(dir, 'out/compile-200.yaml.nft'), 'utf8'));
      expect(ruleset('fast-load')).not.toBe(ruleset('kube-proxy'));
      expect(first.report.rows.map((x: { command: string }) => x.command)).toContain('diff (1 endpoint moved)');
      // End to end: fast-load's compile's median and the fresh load's, added.
      const compile = first.report.rows.find((x: { command: string; format: string }) => x.command === 'compile --layout fast-load' && x.format === 'yaml');
      expect(fs.readFileSync(path.join(dir, 'out/compile-200.yaml.fast-load.nft'), 'utf8')).toBe(ruleset('fast-load'));
      const fresh = rows.find((x) => x.layout === 'fast-load' && x.mode === 'fresh')!;
      const e2e = `fast-load at 200 Services, compile + load: ${(compile.wallMedian + fresh.wallMedian).toFixed(2)} s (compile ${compile.wallMedian.toFixed(2)} s + nft -f fresh ${fresh.wallMedian.toFixed(2)} s)`;
      expect(first.report.checks).toContain(e2e);
      expect(first.stdout).toContain(e2e);
      // And with nft's malloc on huge pages, said how nft was run.
      const huge = rows.find((x) => x.layout === 'fast-load' && x.mode === 'fresh, huge pages')!;
      expect(first.report.checks).toContain(
        `fast-load at 200 Services, compile + load (huge pages): ${(compile.wallMedian + huge.wallMedian).toFixed(2)} s ` +
          `(compile ${compile.wallMedian.toFixed(2)} s + nft -f fresh, huge pages ${huge.wallMedian.toFixed(2)} s)`,
      );
      expect(first.stdout).toContain('nft run as GLIBC_TUNABLES=glibc.malloc.hugetlb=1 nft');

      // Again, fast-load alone: nothing is loaded, the figures are the cached ones, and the
      // diff still has the kube-proxy layout's listing from the cache.
      const again = bench(dir, [...args, '--layouts', 'fast-load']);
      expect(again.stderr).not.toContain('nft -f of the fast-load layout (');
      expect(again.stderr).toContain('2 run(s) of 2 from the cache');
      expect(again.stdout).toContain('2, from the cache');
      expect(again.report.nft).toEqual(rows.filter((x) => x.layout === 'fast-load').map((x) => ({ ...x, cachedRuns: 2 })));
      expect(again.report.nftRatios).toEqual([]);
      expect(again.report.rows.map((x: { command: string }) => x.command)).toContain('diff (1 endpoint moved)');

      // fast-load measured anew beside kube-proxy's cached runs: the ratio says it is not side by side.
      const flCache = path.join(dir, 'load-200x10-fast-load.json');
      fs.writeFileSync(flCache, JSON.stringify({ ...JSON.parse(fs.readFileSync(flCache, 'utf8')), runs: [] }));
      const apart = bench(dir, [...args, '--layouts', 'kube-proxy,fast-load']);
      expect(apart.stderr).toContain('nft -f of the kube-proxy layout: 2 run(s) of 2 from the cache');
      expect(apart.stderr).toContain('nft -f of the fast-load layout (');
      expect(apart.report.nftRatios.map((q: LoadRatio) => q.sideBySide)).toEqual([false, false, false, false, false]);
      expect(apart.stdout).toMatch(/^kube-proxy \/ fast-load at 200 Services, fresh: .* \(not side by side: runs from an earlier benchmark's cache\)$/m);
    });
  });
});

describe('npm run bench, fast-load against the map-only table', () => {
  it('loads the hand-made map-only table of the same Services beside fast-load and prints fast-load / map-only run by run', () => {
    inBenchDir((dir) => {
      const args = ['--sizes', '200', '--formats', 'yaml', '--no-ovs', '--load-runs', '2'];
      // fast-load alone first: its runs are cached, but measured again beside map-only's, so
      // that the ratio compares loads made side by side.
      bench(dir, [...args, '--layouts', 'fast-load']);
      const { report, stdout, stderr } = bench(dir, [...args, '--layouts', 'fast-load,map-only']);
      expect(stderr).not.toContain('from the cache');
      expect(stderr).toContain('nft -f of the fast-load layout (');
      const rows: LoadRow[] = report.nft;
      expect(rows.map((x) => `${x.size} ${x.layout} ${x.mode}`)).toEqual(MODE_ROWS(200, ['fast-load', 'map-only']));
      // The yardstick is the script's table of the benchmark's cluster, not kproxc's.
      const loaded = fs.readFileSync(path.join(dir, 'out/layout-200.map-only.nft'), 'utf8');
      expect(loaded).toBe(mapOnlyTable(makeCluster(200, { endpoints: 10, mixed: true })));
      expect(cachedRuns(dir, 'map-only')).toHaveLength(2);
      const ratios: LoadRatio[] = report.nftRatios;
      expect(ratios.map((x) => `${x.over} / ${x.under} ${x.mode}`)).toEqual(
        ['fresh', 'replace', 'list', 'fresh, huge pages', 'list, huge pages'].map((mode) => `fast-load / map-only ${mode}`),
      );
      expect(ratios.every((x) => x.sideBySide)).toBe(true);
      checkRatios(dir, ratios, stdout);
    });
  });
});

describe('npm run bench --endpoints', () => {
  it('benchmarks Services with another count of endpoints, the map-only table of the same Services beside fast-load', () => {
    inBenchDir((dir) => {
      const { report, stdout } = bench(dir, ['--sizes', '40', '--endpoints', '1', '--formats', 'yaml', '--no-ovs', '--layouts', 'fast-load,map-only']);
      expect(report.endpointsPerService).toBe(1);
      const cluster = makeCluster(40, { endpoints: 1, mixed: true });
      // One endpoint a Service, in the snapshot kproxc compiled and in the yardstick.
      const snapshot = fs.readFileSync(path.join(dir, 'snap-40x1.yaml'), 'utf8');
      expect(snapshot.match(/^kind: EndpointSlice$/gm)).toHaveLength(cluster.services.length);
      expect(snapshot.match(/^- addresses:$/gm)).toHaveLength(cluster.services.reduce((n, s) => n + s.endpoints.length, 0));
      expect(cluster.services.every((s) => s.endpoints.length <= 1)).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'out/layout-40.map-only.nft'), 'utf8')).toBe(mapOnlyTable(cluster));
      const rows: LoadRow[] = report.nft;
      expect(rows.map((x) => `${x.size} ${x.layout} ${x.mode}`)).toEqual(MODE_ROWS(40, ['fast-load', 'map-only']));
      expect(stdout).toContain("(the targets are the issue's, set for 10 endpoints a Service; these Services have 1)");
    });
  });
});
