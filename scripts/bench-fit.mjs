#!/usr/bin/env node
// Fits the cost model `compile --stats` estimates `nft -f` with (src/nft/load-cost-data.ts):
// loads rulesets of both layouts at several sizes with `nft -f` into fresh private network
// namespaces (kproxc-fls-<pid>-<n>) under GNU time, reads what each ruleset holds from
// `compile --stats-format json`, and fits CPU seconds (user + system of nft) and peak RSS by
// least squares over the counts, every coefficient at least zero.
//
//   npm run build && node scripts/bench-fit.mjs [--sizes 200,1000,2000,5000]
//        [--fast-load-sizes 10000,10000x10:all,10000x10:none] [--shapes 2000x1,1000x30,1000x10:all] [--kube-proxy-max 5000]
//        [--versions 1.35,1.37] [--element-probe 50000,200000] [--runs 1] [--dir bench-out] [--write] [--measure-only]
//
// Sizes are Services x 10 endpoints of the benchmark's mix (scripts/gen-snapshot.mjs
// --mixed); --shapes adds Services x endpoints points, whose other proportions of chains,
// rules and elements keep the per-item terms apart (at one shape they grow together); a
// shape with :all or :none has affinity on every Service of the mix or on none (the mix has
// it on one in seven), which moves the share of chains and of the heavier rules that
// affinity makes. --fast-load-sizes takes sizes and shapes loaded in fast-load's layout alone.
// --element-probe adds tables of one set of that many elements, which alone tell what an
// element costs apart from the chains and rules that come with it in compiled tables.
// The kube-proxy layout is loaded as each release in --versions programs it (1.35's table,
// with a chain and a vmap per endpoint set, loads several times slower than 1.37's), and
// not above --kube-proxy-max (its load grows with the
// square of its sets: ~2.5 minutes of CPU at 5,000 Services, ~12 at 10,000).
//
// Loads are cached in <dir>/fit/ keyed by the ruleset's hash, so a rerun loads only what
// changed: after a layout changes, `node scripts/bench-fit.mjs --write` measures its new
// rulesets and writes the refitted coefficients into src/nft/load-cost-data.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterObjects, makeCluster, renderSnapshot } from './gen-snapshot.mjs';
import { LAYOUTS } from './bench-nft.mjs';
import { readJson, sha, shellWord, timedLoad, withNamespace, writeJson } from './bench-netns.mjs';
import { fitCost, formatData } from './bench-fit-model.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/kproxc');
const DATA = path.join(ROOT, 'src/nft/load-cost-data.ts');

function options(argv) {
  const get = (name, dflt) => {
    const i = argv.indexOf(name);
    return i === -1 ? dflt : argv[i + 1];
  };
  const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
  // SERVICESxENDPOINTS, or with :all / :none for affinity on every Service of the mix or none.
  const shape = (s) => {
    const m = /^(\d+)x(\d+)(?::(all|none))?$/.exec(s);
    if (!m) throw new Error(`not a shape: SERVICESxENDPOINTS[:all|:none], not ${s}`);
    return { services: Number(m[1]), endpoints: Number(m[2]), ...(m[3] ? { affinity: m[3] } : {}) };
  };
  const sizeOrShape = (s) => (/^\d+$/.test(s) ? { services: Number(s), endpoints: 10 } : shape(s));
  const o = {
    sizes: list(get('--sizes', '200,1000,2000,5000')).map((n) => ({ services: Number(n), endpoints: 10 })),
    fastLoadSizes: list(get('--fast-load-sizes', '10000,10000x10:all,10000x10:none')).map(sizeOrShape),
    shapes: list(get('--shapes', '2000x1,1000x30,1000x10:all')).map(shape),
    kubeProxyMax: Number(get('--kube-proxy-max', '5000')),
    versions: list(get('--versions', '1.35,1.37')),
    elementProbe: list(get('--element-probe', '50000,200000')).map(Number),
    runs: Number(get('--runs', '1')),
    dir: path.resolve(get('--dir', path.join(ROOT, 'bench-out'))),
    write: argv.includes('--write'),
    // Loads only: no counts, no fit (for a build whose compile has no --stats).
    measureOnly: argv.includes('--measure-only'),
  };
  for (const p of [...o.sizes, ...o.fastLoadSizes, ...o.shapes]) {
    if (!Number.isInteger(p.services) || p.services < 1 || !Number.isInteger(p.endpoints) || p.endpoints < 1) throw new Error(`not a size: ${JSON.stringify(p)}`);
  }
  return o;
}

/** The points to load: [shape, layout], cheapest first so that a stopped run has kept the most. */
function points(o) {
  const out = [];
  for (const p of [...o.sizes, ...o.shapes]) {
    out.push({ ...p, layout: 'fast-load' });
    if (p.services <= o.kubeProxyMax) for (const version of o.versions) out.push({ ...p, layout: 'kube-proxy', version });
  }
  for (const p of o.fastLoadSizes) out.push({ ...p, layout: 'fast-load' });
  const seen = new Set();
  const unique = out.filter((p) => !seen.has(tagOf(p)) && seen.add(tagOf(p)));
  // The kube-proxy layout's cost grows with the square of its Services, fast-load's linearly.
  const weight = (p) => p.services * p.endpoints * (p.layout === 'kube-proxy' ? p.services / 100 : 1);
  return unique.sort((a, b) => weight(a) - weight(b));
}

const shapeOf = (p) => `${p.services}x${p.endpoints}${p.affinity ? `-affinity-${p.affinity}` : ''}`;
const tagOf = (p) => (p.probe ? p.layout.replace(' ', '-') : `${shapeOf(p)}-${p.layout}${p.version ? `-${p.version}` : ''}`);

function snapshot(dir, p) {
  const file = path.join(dir, `snap-${shapeOf(p)}.json`);
  if (fs.existsSync(file)) return file;
  const cluster = makeCluster(p.services, { endpoints: p.endpoints, mixed: true, affinity: p.affinity });
  fs.writeFileSync(`${file}.tmp`, renderSnapshot(clusterObjects(cluster), 'json'));
  fs.renameSync(`${file}.tmp`, file);
  return file;
}

/** The ruleset of a point, and what it holds as `compile --stats-format json` counts it. */
function compiled(dir, p, count) {
  const input = snapshot(dir, p);
  const file = path.join(dir, `ruleset-${tagOf(p)}.nft`);
  const stats = count ? ['--stats-format', 'json'] : [];
  const version = p.version ? ['--kube-proxy-version', p.version] : [];
  const r = spawnSync(BIN, ['compile', '--layout', p.layout, ...version, ...stats, input, '-o', file], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`compile of ${tagOf(p)} failed (${r.status}):\n${r.stderr}`);
  return { file, counts: count ? statsOf(r.stderr, p.layout) : undefined };
}

/** The counts of `layout` in what `compile --stats-format json` wrote to standard error. */
export function statsOf(stderr, layout) {
  const line = stderr.split('\n').find((l) => l.startsWith('{"stats"'));
  if (!line) throw new Error(`compile --stats-format json printed no stats:\n${stderr}`);
  const found = JSON.parse(line).stats.layouts.find((l) => l.layout === layout);
  if (!found) throw new Error(`compile --stats-format json has no ${layout} layout`);
  return found.counts;
}

/**
 * A table of one set with `n` elements, one `add element` line each as kproxc writes
 * them: every compiled table adds elements along with chains and rules, so its per-element
 * cost cannot be told apart from theirs; a table whose cost is nearly all elements can (a
 * layout that puts endpoints in maps pays mostly this).
 */
function elementProbe(dir, n) {
  const file = path.join(dir, `ruleset-elements-${n}.nft`);
  const lines = ['table ip kproxc-probe {', '\tset s { type ipv4_addr . inet_proto . inet_service ; }', '}'];
  for (let i = 0; i < n; i++) lines.push(`add element ip kproxc-probe s { 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255} . tcp . ${1 + (i % 60000)} }`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const counts = { tables: 1, chains: 0, rules: 0, sets: 1, maps: 0, anonymousSets: 0, elements: n, setSquares: 1, setSquareObjects: 1 + n };
  return { file, counts };
}

/** The point's fresh loads, from the cache when its ruleset was loaded before. */
async function measured(dir, p, file, runs) {
  const hash = sha(file);
  const cacheFile = path.join(dir, `load-${tagOf(p)}.json`);
  const c = readJson(cacheFile);
  const done = c?.hash === hash ? c.runs : [];
  for (let i = done.length; i < runs; i++) {
    console.error(`  ${tagOf(p)}: nft -f, fresh, run ${i + 1} of ${runs} (${(fs.statSync(file).size / 1e6).toFixed(1)} MB)...`);
    done.push(await withNamespace((ns) => timedLoad(ns, file), 'kproxc-fls'));
    writeJson(cacheFile, { hash, runs: done });
    const last = done[done.length - 1];
    console.error(`    ${last.cpu} s CPU, ${last.wall.toFixed(2)} s wall, ${last.rssMB} MB peak`);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
  return { cpu: median(done.slice(0, runs).map((r) => r.cpu)), rssMB: median(done.slice(0, runs).map((r) => r.rssMB)), cached: Math.min(c?.hash === hash ? c.runs.length : 0, runs) };
}

/** The points fitted, in words, for the data module's comment. */
function pointList(rows) {
  const byLayout = new Map();
  for (const r of rows) {
    const key = r.probe ? 'one set of N elements' : `${r.layout}${r.version ? ` ${r.version}` : ''}`;
    byLayout.set(key, [...(byLayout.get(key) ?? []), r.probe ? String(r.elements ?? r.counts.elements) : `${r.services}x${r.endpoints}${r.affinity ? ` (affinity on ${r.affinity})` : ''}`]);
  }
  return [...byLayout].map(([k, v]) => `${k} at ${v.join(', ')}`).join('; ');
}

async function main() {
  const o = options(process.argv.slice(2));
  const dir = path.join(o.dir, 'fit');
  fs.mkdirSync(dir, { recursive: true });
  const rows = [];
  for (const p of points(o)) {
    const { file, counts } = compiled(dir, p, !o.measureOnly);
    rows.push({ ...p, counts, ...(await measured(dir, p, file, o.runs)) });
  }
  for (const n of o.elementProbe) {
    const p = { services: 0, endpoints: 0, layout: `${n} elements`, probe: true };
    const { file, counts } = elementProbe(dir, n);
    rows.push({ ...p, counts, ...(await measured(dir, p, file, o.runs)) });
  }
  if (o.measureOnly) return;
  const fit = fitCost(rows);
  const machine = `${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GB, ${execFileSync('nft', ['--version'], { encoding: 'utf8' }).trim()}, kernel ${os.release()}`;
  console.log(fit.report);
  writeJson(path.join(dir, 'fit.json'), { machine, rows, cpu: fit.cpu, rss: fit.rss });
  if (o.write) {
    fs.writeFileSync(DATA, formatData(fit, { machine, command: ['node scripts/bench-fit.mjs', ...process.argv.slice(2).map(shellWord)].join(' '), date: new Date().toISOString().slice(0, 10), points: pointList(rows) }));
    console.error(`wrote ${path.relative(ROOT, DATA)}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
