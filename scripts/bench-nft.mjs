// The benchmark's nft runs: each layout of a size's ruleset (`compile --layout`) loaded
// with `nft -f` into a fresh private network namespace (fresh), listed with `nft -j list
// ruleset` (what `diff` reads), loaded again over itself (full replace: the file's own
// `add table; delete table; table {...}` prelude swaps the loaded table in one
// transaction), then updated by the diff loop for one endpoint moved (list, `kproxc diff`,
// `nft -f` of its transaction, timed end to end) and by the same loop in one pipe, the
// endpoint moved back (`nft -j list ruleset | kproxc diff --live -`); and, but for the kube-proxy layout, loaded
// fresh and listed again with nft's malloc on huge pages. Each command is timed under GNU time:
// wall seconds and CPU seconds (user + system), the CPU being where the kernel's work is
// counted and what moves least with the rest of a shared machine's load. The layouts are
// run back to back, run after run, so that the machine's drift weighs on them alike.
//
// Results are cached in the benchmark's directory keyed by the ruleset's hash (a kube-proxy
// layout table of 10,000 Services takes a quarter of an hour to load), and so is the live
// listing the benchmark's `diff` rows read (the kube-proxy layout's, listed right after its
// fresh load). Namespaces: scripts/bench-netns.mjs.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readJson, sha, shellWord, timed, timedLoad, withNamespace, writeJson } from './bench-netns.mjs';

// map-only is not kproxc's: the hand-made yardstick of scripts/map-only-table.mjs (the same
// Services, endpoints in one map per protocol, no affinity), loaded beside fast-load so that
// their ratio compares loads made side by side.
export const LAYOUTS = ['kube-proxy', 'fast-load', 'map-only'];
/** Whether kproxc makes (and so diffs) the layout: every one but the map-only yardstick. */
const diffed = (layout) => layout !== 'map-only';
// What each run measures: the load into a fresh namespace, the listing of it (what `diff`
// reads), the load again over it (a full resync), and the diff loop for one moved endpoint
// (listed to a file, and piped);
// then the fresh load and the listing again with nft's malloc on huge pages (below).
export const MODES = ['fresh', 'replace', 'list', 'diff loop', 'diff loop, piped', 'fresh, huge pages', 'list, huge pages'];
// Each diff loop's timed steps, in order (piped, the listing and the diff are one step).
const LOOP_STEPS = { 'diff loop': ['list', 'diff', 'apply'], 'diff loop, piped': ['list | diff', 'apply'] };
const LOOP_MODES = Object.keys(LOOP_STEPS);
const HUGE_PAGE_MODES = ['fresh, huge pages', 'list, huge pages'];

// glibc's malloc backed by transparent huge pages (glibc >= 2.35, THP "madvise" or
// "always"): nft spends much of a large load in malloc's page faults, one per 4 KiB
// page it touches. The same nft, the same file; only the process's allocator differs.
const HUGE_PAGES = ['env', 'GLIBC_TUNABLES=glibc.malloc.hugetlb=1'];
// Not for the kube-proxy layout: a fresh load of it at 10k takes a quarter of an hour.
const hugePagesMeasured = (layout) => layout !== 'kube-proxy';
/** Whether a run of `layout` measures `mode`. */
const measures = (layout, mode, loop) =>
  (!LOOP_MODES.includes(mode) || Boolean(loop && diffed(layout))) && (!HUGE_PAGE_MODES.includes(mode) || hugePagesMeasured(layout));
// This benchmark's runs: the layouts loaded in run i of it share the batch `${BATCH}-${i}`.
const BATCH = `${process.pid}-${Date.now()}`;
// The ratios reported, run by run: how much faster fast-load is than kube-proxy's layout,
// and how close it comes to the map-only yardstick.
const RATIOS = [
  ['kube-proxy', 'fast-load'],
  ['fast-load', 'map-only'],
];

/**
 * The cached live listing of the kube-proxy layout (the diff's input): nft-<size>.json
 * holds the ruleset's hash (and its fresh load's wall seconds), live-<size>.json the
 * listing. Undefined when absent or made from another ruleset.
 */
function cachedListing(dir, tag, hash) {
  const meta = readJson(path.join(dir, `nft-${tag}.json`));
  const liveFile = path.join(dir, `live-${tag}.json`);
  return meta?.hash === hash && fs.existsSync(liveFile) ? { ...meta, liveFile } : undefined;
}

/** Keeps a listing of the kube-proxy layout (what the timed `nft -j list` printed) for the diff rows. */
function writeListing(dir, tag, hash, loaded, listed) {
  const liveFile = path.join(dir, `live-${tag}.json`);
  fs.writeFileSync(liveFile, listed.stdout);
  const meta = { hash, loadSeconds: loaded.wall, load: os.loadavg().map((x) => Number(x.toFixed(2))), liveBytes: listed.stdout.length };
  writeJson(path.join(dir, `nft-${tag}.json`), meta);
  return { ...meta, liveFile };
}

const listRuleset = (ns, prefix = []) => timed(ns, [...prefix, 'nft', '-j', 'list', 'ruleset']);
const lineCount = (b) => b.toString('utf8').split('\n').filter(Boolean).length;

/** The operations of a transaction's text: an element command's members each, any other line one. */
function operationCount(b) {
  let n = 0;
  for (const line of b.toString('utf8').split('\n').filter(Boolean)) {
    const members = /^(?:add|delete) element \S+ \S+ \S+ \{ (.*) \}$/.exec(line)?.[1];
    n += members === undefined ? 1 : members.split(', ').length;
  }
  return n;
}

/** A diff loop's result: wall time end to end, CPU of its processes, each step's wall time, its transaction's size. */
function loopResult(t, steps, cpu, load, transactionFile) {
  const wall = Number(process.hrtime.bigint() - t) / 1e9;
  const transaction = fs.readFileSync(transactionFile);
  return { wall: Number(wall.toFixed(4)), cpu: Number(cpu.toFixed(2)), load, steps, lines: lineCount(transaction), operations: operationCount(transaction) };
}

/**
 * The update cycle for one endpoint moved, as a node agent runs it against the table
 * loaded in `ns`: list the live table (`nft -j list ruleset`) to a file, `kproxc diff` the
 * moved snapshot against it in the same layout, apply the transaction with `nft -f`.
 */
async function diffLoop(ns, layout, loop) {
  const base = path.join(loop.dir, `loop-${process.pid}-${layout}`);
  try {
    const t = process.hrtime.bigint();
    const listed = await listRuleset(ns);
    fs.writeFileSync(`${base}.json`, listed.stdout);
    const diff = await timed(null, [process.execPath, loop.bin, 'diff', loop.moved, '--layout', layout, '--live', `${base}.json`, '-o', `${base}.nft`]);
    const apply = await timedLoad(ns, `${base}.nft`);
    return loopResult(t, { list: listed.wall, diff: diff.wall, apply: apply.wall }, listed.cpu + diff.cpu + apply.cpu, apply.load, `${base}.nft`);
  } finally {
    for (const ext of ['json', 'nft']) fs.rmSync(`${base}.${ext}`, { force: true });
  }
}

/**
 * The same cycle in one pipe, `nft -j list ruleset | kproxc diff --live - ...`, then `nft
 * -f` of the transaction: kproxc compiles the snapshot while nft lists (docs/diff.md).
 * Run after diffLoop on the same table, it moves the endpoint back (to the base snapshot).
 */
async function pipedDiffLoop(ns, layout, loop) {
  const out = path.join(loop.dir, `loop-${process.pid}-${layout}-piped.nft`);
  try {
    const t = process.hrtime.bigint();
    const diff = [process.execPath, loop.bin, 'diff', loop.base, '--layout', layout, '--live', '-', '-o', out].map(shellWord).join(' ');
    const piped = await timed(ns, ['sh', '-c', `nft -j list ruleset | ${diff}`]);
    const apply = await timedLoad(ns, out);
    return loopResult(t, { 'list | diff': piped.wall, apply: apply.wall }, piped.cpu + apply.cpu, apply.load, out);
  } finally {
    fs.rmSync(out, { force: true });
  }
}

/**
 * One run of one layout in a fresh namespace: load (fresh), list it as `diff` reads it
 * (keeping the listing when `listing` wants it), load it again over itself (replace), then
 * the diff loop for one endpoint moved (when `loop` says where the moved snapshot is);
 * then, in another fresh namespace, the fresh load and the listing with huge pages.
 */
async function loadRun(layout, file, listing, loop, batch) {
  const r = await withNamespace(async (ns) => {
    const fresh = await timedLoad(ns, file);
    const { stdout, ...list } = await listRuleset(ns);
    if (listing) listing(fresh, { stdout });
    const replace = await timedLoad(ns, file);
    const r = { batch, fresh, replace, list: { ...list, bytes: stdout.length } };
    if (!measures(layout, 'diff loop', loop)) return r;
    return { ...r, 'diff loop': await diffLoop(ns, layout, loop), 'diff loop, piped': await pipedDiffLoop(ns, layout, loop) };
  });
  if (!hugePagesMeasured(layout)) return r;
  return withNamespace(async (ns) => {
    const fresh = await timedLoad(ns, file, HUGE_PAGES);
    const { stdout, ...list } = await listRuleset(ns, HUGE_PAGES);
    return { ...r, 'fresh, huge pages': fresh, 'list, huge pages': { ...list, bytes: stdout.length } };
  });
}

/**
 * Loads each layout's ruleset `runs` times (fresh, then replace), the layouts back to
 * back within a run; runs already in the cache for the same ruleset are not loaded again.
 * `files` maps a layout to its compiled ruleset; the kube-proxy layout's listing is kept
 * for the diff. Returns, per layout, the runs and which of them came from the cache, and
 * the listing when there is one (loaded now, or cached).
 */
export async function loadLayouts(dir, tag, files, runs, loop) {
  const state = new Map();
  const complete = (layout) => (r) => MODES.every((m) => r[m] || !measures(layout, m, loop));
  for (const [layout, file] of files) {
    const hash = sha(file);
    const cacheFile = path.join(dir, `load-${tag}-${layout}.json`);
    const c = readJson(cacheFile);
    // Runs of an older benchmark (without the listing or the loop) are measured again.
    const cachedRuns = c?.hash === hash ? c.runs.filter(complete(layout)) : [];
    state.set(layout, { file, hash, cacheFile, runs: cachedRuns, cached: 0, bytes: fs.statSync(file).size });
  }
  // A ratio compares runs made side by side (each run of a batch loads the layouts back to
  // back). So when some layout must be measured from run i on, the others are measured
  // again from there too, except kube-proxy's (a quarter of an hour at 10k): its cached
  // runs stay, and a ratio against them says it is not side by side.
  const firstMissing = Math.min(runs, ...[...state.values()].map((s) => s.runs.length));
  for (const [layout, s] of state) if (layout !== 'kube-proxy') s.runs = s.runs.slice(0, firstMissing);
  const kp = state.get('kube-proxy');
  let live = kp && cachedListing(dir, tag, kp.hash);
  for (const [layout, s] of state) {
    s.cached = Math.min(s.runs.length, runs);
    if (s.cached) console.error(`  ${tag}: nft -f of the ${layout} layout: ${s.cached} run(s) of ${runs} from the cache (${path.basename(s.cacheFile)})`);
  }
  for (let i = 0; i < runs; i++) {
    for (const [layout, s] of state) {
      if (s.runs.length > i) continue;
      const modes = MODES.filter((m) => measures(layout, m, loop)).join('; ');
      console.error(`  ${tag}: nft -f of the ${layout} layout (${(s.bytes / 1e6).toFixed(1)} MB): ${modes}; run ${i + 1} of ${runs}...`);
      const listing = layout === 'kube-proxy' && !live ? (fresh, listed) => (live = writeListing(dir, tag, s.hash, fresh, listed)) : undefined;
      s.runs.push(await loadRun(layout, s.file, listing, loop, `${BATCH}-${i}`));
      writeJson(s.cacheFile, { hash: s.hash, runs: s.runs });
    }
  }
  const layouts = [...state].map(([layout, s]) => ({ layout, file: s.file, bytes: s.bytes, runs: s.runs.slice(0, runs), cached: s.cached }));
  return { layouts, live };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * The report's rows for one size: per layout and mode, the medians of wall and CPU
 * seconds; and per mode, kube-proxy / fast-load and fast-load / map-only as the medians
 * of the run-by-run ratios (each run loads the layouts back to back, so a ratio compares
 * loads made side by side).
 */
export function loadRows(size, layouts) {
  const rows = [];
  // Without the moved snapshot there is no diff loop; a mode no run measured has no row.
  const modes = MODES.filter((mode) => layouts.some((l) => l.runs.some((r) => r[mode])));
  for (const mode of modes) {
    for (const l of layouts) {
      const runs = l.runs.map((r) => r[mode]);
      if (!runs.length || runs.some((r) => !r)) continue;
      rows.push({
        size,
        layout: l.layout,
        mode,
        rulesetBytes: l.bytes,
        runs: runs.length,
        cachedRuns: l.cached,
        wallMedian: median(runs.map((r) => r.wall)),
        cpuMedian: median(runs.map((r) => r.cpu)),
        loadAverages: runs.map((r) => r.load),
        ...modeDetail(mode, runs),
      });
    }
  }
  const ratios = [];
  for (const [over, under] of RATIOS) {
    const a = layouts.find((l) => l.layout === over);
    const b = layouts.find((l) => l.layout === under);
    if (!a || !b) continue;
    for (const mode of modes) {
      if (!a.runs.every((r) => r[mode]) || !b.runs.every((r) => r[mode])) continue;
      // A tiny table's CPU can round to 0 in GNU time's hundredths: no ratio from that run.
      const by = (key) => {
        const q = a.runs.map((r, i) => r[mode][key] / b.runs[i][mode][key]).filter(Number.isFinite);
        return q.length ? median(q) : null;
      };
      const sideBySide = a.runs.every((r, i) => r.batch !== undefined && r.batch === b.runs[i].batch);
      ratios.push({ size, mode, over, under, wall: by('wall'), cpu: by('cpu'), sideBySide });
    }
  }
  return { rows, ratios };
}

/** What a mode's row says besides its times: the listing's size; the loop's steps and transaction. */
function modeDetail(mode, runs) {
  if (mode.startsWith('list')) return { listingBytes: median(runs.map((r) => r.bytes)) };
  if (!LOOP_MODES.includes(mode)) return {};
  const steps = Object.fromEntries(LOOP_STEPS[mode].map((k) => [k, median(runs.map((r) => r.steps[k]))]));
  return { steps, ...transactionSize(runs) };
}

/** The loop's transaction: its lines and operations (runs cached before operations were counted: the lines alone). */
function transactionSize(runs) {
  const operations = runs.every((r) => r.operations !== undefined) ? median(runs.map((r) => r.operations)) : undefined;
  return { diffLines: median(runs.map((r) => r.lines)), diffOperations: operations };
}

/**
 * The live listing of the kube-proxy layout's ruleset `file`, for the diff: from the
 * cache, else (when `mayLoad`) from a load made only for it, else undefined.
 */
export async function liveListing(dir, tag, file, mayLoad) {
  const hash = sha(file);
  const cached = cachedListing(dir, tag, hash);
  if (cached || !mayLoad) return cached;
  console.error(`  ${tag}: nft -f of the kube-proxy layout, for the live listing the diff reads...`);
  return withNamespace(async (ns) => {
    const loaded = await timedLoad(ns, file);
    return writeListing(dir, tag, hash, loaded, await listRuleset(ns));
  });
}

const times = (x) => (x === null ? 'no ratio (under 0.01 s)' : `${x.toFixed(x < 10 ? 2 : 1)}x`);

/** A row's last column: what was listed, or the diff loop's steps. */
function detail(r) {
  if (r.mode.startsWith('list')) return `listing ${(r.listingBytes / 1e6).toFixed(1)} MB`;
  if (!LOOP_MODES.includes(r.mode)) return '';
  const steps = LOOP_STEPS[r.mode].map((k) => `${k === 'apply' ? 'nft -f' : k} ${r.steps[k].toFixed(2)} s`).join(' + ');
  return `${steps}; ${r.diffLines} lines${r.diffOperations === undefined ? '' : `, ${r.diffOperations} operations`}`;
}

/** The loads as a table: a row per layout and mode, then the layouts' ratios per mode. */
export function formatLoads(rows, ratios, skipped) {
  const head = ['Services', 'layout', 'mode', 'wall median', 'CPU median', 'ruleset', 'runs', 'detail'];
  const body = rows.map((r) => [
    String(r.size),
    r.layout,
    r.mode,
    `${r.wallMedian.toFixed(2)} s`,
    `${r.cpuMedian.toFixed(2)} s`,
    `${(r.rulesetBytes / 1e6).toFixed(1)} MB`,
    r.cachedRuns === r.runs ? `${r.runs}, from the cache` : r.cachedRuns ? `${r.runs} (${r.cachedRuns} from the cache)` : String(r.runs),
    detail(r),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const lines = [];
  if (rows.length) {
    lines.push(
      'nft into a private namespace: fresh (nft -f, table absent), list (nft -j list ruleset of it, what diff reads), replace (the same file over the loaded table),',
      'diff loop (one endpoint moved: nft -j list ruleset, kproxc diff in the same layout, nft -f of its transaction, end to end),',
      'diff loop, piped (the endpoint moved back, nft -j list ruleset | kproxc diff --live -: the compile runs while nft lists); CPU = user + system of the processes;',
      `huge pages: fresh and list again, nft run as ${HUGE_PAGES.slice(1).join(' ')} nft ... (glibc's malloc on transparent huge pages)`,
    );
    lines.push(line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line));
  }
  for (const q of ratios) {
    const apart = q.sideBySide ? '' : ' (not side by side: runs from an earlier benchmark\'s cache)';
    lines.push(`${q.over} / ${q.under} at ${q.size} Services, ${q.mode}: ${times(q.cpu)} in CPU time, ${times(q.wall)} in wall time${apart}`);
  }
  for (const s of skipped) lines.push(`${s.what}, ${s.size} Services: not measured (${s.why})`);
  return lines.join('\n');
}
