#!/usr/bin/env node
// Measures `kproxc diff` against a large live ruleset (run as root; needs `npm run build`):
//
//   node scripts/diff-scale.mjs --services 10000 [--dir DIR] [--netns NAME] [--runs 3]
//
// It writes the snapshot, times `compile`, loads the compile into a network namespace
// (created and removed here unless --netns names one that already holds it; the load of
// 10,000 Services takes about a minute), lists it with `nft -j list ruleset`, then times
// `diff` (reading the live JSON included) for an unchanged cluster, one endpoint added,
// one endpoint removed and one Service removed, and counts the lines of each. Finally it
// applies the one-endpoint diff, checks that a second diff is empty, and puts it back.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeCluster, podIP, snapshotYaml } from './gen-snapshot.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/kproxc');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i === -1 ? dflt : process.argv[i + 1];
}

const n = Number(arg('--services', '10000'));
const runs = Number(arg('--runs', '3'));
const dir = arg('--dir', undefined) ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-diff-scale-'));
let netns = arg('--netns', undefined);
fs.mkdirSync(dir, { recursive: true });

function timed(fn) {
  const t = process.hrtime.bigint();
  const r = fn();
  return { r, s: Number(process.hrtime.bigint() - t) / 1e9 };
}

/** Runs kproxc under /usr/bin/time: its output, and wall time, CPU time and peak memory. */
function kproxc(args) {
  const r = spawnSync('/usr/bin/time', ['-f', '@time %e %U %S %M', process.execPath, BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const m = /@time (\S+) (\S+) (\S+) (\d+)\s*$/.exec(r.stderr);
  if (!m || (r.status !== 0 && r.status !== 1)) throw new Error(`kproxc ${args.join(' ')}: ${r.status}\n${r.stderr}`);
  return { stdout: r.stdout, wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssMB: Math.round(Number(m[4]) / 1024) };
}

/** Runs kproxc `runs` times: the last output, and the medians of wall time, CPU time and peak memory. */
function measure(args) {
  const rs = [];
  for (let i = 0; i < runs; i++) rs.push(kproxc(args));
  const med = (k) => median(rs.map((r) => r[k]));
  return { out: rs[rs.length - 1].stdout, text: `wall ${fmt(rs.map((r) => r.wall))}, CPU median ${med('cpu').toFixed(2)} s, peak RSS ${med('rssMB')} MB` };
}

function nft(args, input) {
  return execFileSync('ip', ['netns', 'exec', netns, 'nft', ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => `${xs.map((x) => x.toFixed(2)).join(', ')} s (median ${median(xs).toFixed(2)} s)`;
const write = (name, cluster) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, snapshotYaml(cluster));
  return f;
};

const base = makeCluster(n);
const baseFile = write('base.yaml', base);
const compileOut = path.join(dir, 'compile.nft');
const compiled = measure(['compile', baseFile, '-o', compileOut]);
console.log(`services: ${n}; compile: ${compiled.text}; ${fs.statSync(compileOut).size} bytes`);

let created = false;
if (!netns) {
  netns = `kproxc-diff-scale-${process.pid}`;
  execFileSync('ip', ['netns', 'add', netns]);
  created = true;
}
try {
  const liveFile = path.join(dir, 'live.json');
  if (created) console.log(`nft -f (table absent): ${timed(() => nft(['-f', compileOut])).s.toFixed(1)} s`);
  const list = timed(() => fs.writeFileSync(liveFile, nft(['-j', 'list', 'ruleset'])));
  console.log(`nft -j list ruleset: ${list.s.toFixed(1)} s; ${fs.statSync(liveFile).size} bytes`);

  const variants = [];
  variants.push(['unchanged', baseFile]);
  const added = structuredClone(base);
  added.services[5].endpoints.push({ ip: podIP(n * 3 + 1), local: true });
  variants.push(['one endpoint added', write('endpoint-added.yaml', added)]);
  const removedEp = structuredClone(base);
  removedEp.services[5].endpoints.pop();
  variants.push(['one endpoint removed', write('endpoint-removed.yaml', removedEp)]);
  const removedSvc = structuredClone(base);
  removedSvc.services.splice(7, 1);
  variants.push(['one Service removed', write('service-removed.yaml', removedSvc)]);

  const outputs = {};
  for (const [name, file] of variants) {
    const { out, text } = measure(['diff', file, '--live', liveFile]);
    outputs[name] = { file, out };
    const lines = out === '' ? 0 : out.split('\n').length - 1;
    console.log(`diff, ${name}: ${lines} lines; ${text}`);
  }

  const { file, out } = outputs['one endpoint added'];
  console.log(`nft -f (one endpoint added): ${timed(() => nft(['-f', '-'], out)).s.toFixed(2)} s`);
  fs.writeFileSync(liveFile, nft(['-j', 'list', 'ruleset']));
  const again = kproxc(['diff', file, '--live', liveFile]).stdout;
  console.log(`second diff after applying: ${again === '' ? 'empty' : `NOT EMPTY:\n${again}`}`);
  const back = kproxc(['diff', baseFile, '--live', liveFile]).stdout;
  console.log(`nft -f (back to the base cluster, ${back.split('\n').length - 1} lines): ${timed(() => nft(['-f', '-'], back)).s.toFixed(2)} s`);
} finally {
  if (created) spawnSync('ip', ['netns', 'del', netns]);
}
