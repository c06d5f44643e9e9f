// The benchmark's nft loads: each layout of a size's ruleset (`compile --layout`) loaded
// with `nft -f` into a fresh private network namespace (fresh), then the same file again
// over it (full replace: the file's own `add table; delete table; table {...}` prelude
// swaps the loaded table in one transaction). Each load is timed under GNU time: wall
// seconds and CPU seconds (user + system of nft), the CPU being where the kernel's work is
// counted and what moves least with the rest of a shared machine's load. The layouts are
// loaded back to back, run after run, so that the machine's drift weighs on them alike.
//
// Results are cached in the benchmark's directory keyed by the ruleset's hash (a kube-proxy
// layout table of 10,000 Services takes a quarter of an hour to load), and so is the live
// listing the nftables diff reads (`nft -j list ruleset` of the kube-proxy layout, listed
// right after its fresh load).
//
// Namespaces are named kproxc-bench-<pid>-<n> and removed when done, when a load fails,
// and on exit or SIGINT/SIGTERM/SIGHUP (the running nft is then killed by its process
// group, which this module started).
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const LAYOUTS = ['kube-proxy', 'fast-load'];
export const MODES = ['fresh', 'replace'];

const namespaces = new Set();
const children = new Set();
let counter = 0;
let guarded = false;

function removeNamespaces() {
  for (const ns of namespaces) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  namespaces.clear();
}

/** Cleans up on exit and on the signals that end a run from a terminal or a supervisor. */
function guard() {
  if (guarded) return;
  guarded = true;
  process.on('exit', removeNamespaces);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      for (const pid of children) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      removeNamespaces();
      console.error(`benchmark stopped by ${signal}; its namespaces are removed`);
      process.exit(128 + os.constants.signals[signal]);
    });
  }
}

async function withNamespace(fn) {
  guard();
  const ns = `kproxc-bench-${process.pid}-${counter++}`;
  const add = spawnSync('ip', ['netns', 'add', ns], { encoding: 'utf8' });
  if (add.status !== 0) throw new Error(`ip netns add ${ns} failed: ${add.stderr}`);
  namespaces.add(ns);
  try {
    return await fn(ns);
  } finally {
    spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    namespaces.delete(ns);
  }
}

/**
 * Runs a command inside the namespace as its own process group (so that a signal can stop
 * all of it, not only GNU time), asynchronously (so that the signal handlers run while it
 * does). Resolves to its exit status and output.
 */
function run(ns, args, { timed = false } = {}) {
  const argv = ['ip', 'netns', 'exec', ns, ...args];
  const [cmd, ...rest] = timed ? ['/usr/bin/time', '-f', '@time %e %U %S', ...argv] : argv;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child.pid);
    const out = [];
    const err = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    child.on('error', reject);
    child.on('close', (status) => {
      children.delete(child.pid);
      resolve({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * One `nft -f FILE` under GNU time: wall seconds (measured here, finer than GNU time's
 * hundredths), CPU seconds (GNU time's, in hundredths), and the load average then.
 */
async function timedLoad(ns, file) {
  const t = process.hrtime.bigint();
  const r = await run(ns, ['nft', '-f', file], { timed: true });
  const wall = Number(process.hrtime.bigint() - t) / 1e9;
  const m = /@time (\S+) (\S+) (\S+)\s*$/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`nft -f ${file} failed in ${ns} (${r.status}):\n${r.stderr.slice(0, 4000)}`);
  return { wall: Number(wall.toFixed(4)), cpu: Number((Number(m[2]) + Number(m[3])).toFixed(2)), load: Number(os.loadavg()[0].toFixed(2)) };
}

const sha = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function writeJson(file, value) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(value));
  fs.renameSync(`${file}.tmp`, file);
}

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

async function writeListing(dir, tag, hash, ns, loaded) {
  const r = await run(ns, ['nft', '-j', 'list', 'ruleset']);
  if (r.status !== 0) throw new Error(`nft -j list ruleset failed in ${ns}: ${r.stderr}`);
  const liveFile = path.join(dir, `live-${tag}.json`);
  fs.writeFileSync(liveFile, r.stdout);
  const meta = { hash, loadSeconds: loaded.wall, load: os.loadavg().map((x) => Number(x.toFixed(2))), liveBytes: r.stdout.length };
  writeJson(path.join(dir, `nft-${tag}.json`), meta);
  return { ...meta, liveFile };
}

/** One run of one layout: fresh, the listing when wanted and not cached, then replace. */
async function loadRun(file, listing) {
  return withNamespace(async (ns) => {
    const fresh = await timedLoad(ns, file);
    if (listing) await listing(ns, fresh);
    const replace = await timedLoad(ns, file);
    return { fresh, replace };
  });
}

/**
 * Loads each layout's ruleset `runs` times (fresh, then replace), the layouts back to
 * back within a run; runs already in the cache for the same ruleset are not loaded again.
 * `files` maps a layout to its compiled ruleset; the kube-proxy layout's listing is kept
 * for the diff. Returns, per layout, the runs and which of them came from the cache, and
 * the listing when there is one (loaded now, or cached).
 */
export async function loadLayouts(dir, tag, files, runs) {
  const state = new Map();
  for (const [layout, file] of files) {
    const hash = sha(file);
    const cacheFile = path.join(dir, `load-${tag}-${layout}.json`);
    const c = readJson(cacheFile);
    state.set(layout, { file, hash, cacheFile, runs: c?.hash === hash ? c.runs : [], cached: 0, bytes: fs.statSync(file).size });
  }
  const kp = state.get('kube-proxy');
  let live = kp && cachedListing(dir, tag, kp.hash);
  for (const [layout, s] of state) {
    s.cached = Math.min(s.runs.length, runs);
    if (s.cached) console.error(`  ${tag}: nft -f of the ${layout} layout: ${s.cached} run(s) of ${runs} from the cache (${path.basename(s.cacheFile)})`);
  }
  for (let i = 0; i < runs; i++) {
    for (const [layout, s] of state) {
      if (s.runs.length > i) continue;
      console.error(`  ${tag}: nft -f of the ${layout} layout (${(s.bytes / 1e6).toFixed(1)} MB), fresh and replace, run ${i + 1} of ${runs}...`);
      const listing = layout === 'kube-proxy' && !live ? async (ns, fresh) => (live = await writeListing(dir, tag, s.hash, ns, fresh)) : undefined;
      s.runs.push(await loadRun(s.file, listing));
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
 * seconds; and per mode, kube-proxy / fast-load as the median of the run-by-run ratios
 * (each run loads both layouts back to back, so a ratio compares loads made side by side).
 */
export function loadRows(size, layouts) {
  const rows = [];
  for (const mode of MODES) {
    for (const l of layouts) {
      const runs = l.runs.map((r) => r[mode]);
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
      });
    }
  }
  const kp = layouts.find((l) => l.layout === 'kube-proxy');
  const fl = layouts.find((l) => l.layout === 'fast-load');
  const ratios = [];
  if (kp && fl) {
    for (const mode of MODES) {
      // A tiny table's CPU can round to 0 in GNU time's hundredths: no ratio from that run.
      const by = (key) => {
        const q = kp.runs.map((r, i) => r[mode][key] / fl.runs[i][mode][key]).filter(Number.isFinite);
        return q.length ? median(q) : null;
      };
      ratios.push({ size, mode, wall: by('wall'), cpu: by('cpu') });
    }
  }
  return { rows, ratios };
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
  return withNamespace(async (ns) => writeListing(dir, tag, hash, ns, await timedLoad(ns, file)));
}

const times = (x) => (x === null ? 'no ratio (under 0.01 s)' : `${x.toFixed(x < 10 ? 2 : 1)}x`);

/** The loads as a table: a row per layout and mode, then kube-proxy / fast-load per mode. */
export function formatLoads(rows, ratios, skipped) {
  const head = ['Services', 'layout', 'mode', 'wall median', 'CPU median', 'ruleset', 'runs'];
  const body = rows.map((r) => [
    String(r.size),
    r.layout,
    r.mode,
    `${r.wallMedian.toFixed(2)} s`,
    `${r.cpuMedian.toFixed(2)} s`,
    `${(r.rulesetBytes / 1e6).toFixed(1)} MB`,
    r.cachedRuns === r.runs ? `${r.runs}, from the cache` : r.cachedRuns ? `${r.runs} (${r.cachedRuns} from the cache)` : String(r.runs),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const lines = [];
  if (rows.length) {
    lines.push('nft -f into a private namespace: fresh (table absent), and replace (the same file over the loaded table); CPU = user + system of nft');
    lines.push(line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line));
  }
  for (const q of ratios) {
    lines.push(`kube-proxy / fast-load at ${q.size} Services, ${q.mode}: ${times(q.cpu)} in CPU time, ${times(q.wall)} in wall time`);
  }
  for (const s of skipped) lines.push(`${s.what}, ${s.size} Services: not measured (${s.why})`);
  return lines.join('\n');
}
