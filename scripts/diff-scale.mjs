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
const dir = arg('--dir', fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-diff-scale-')));
let netns = arg('--netns', undefined);
fs.mkdirSync(dir, { recursive: true });

function timed(fn) {
  const t = process.hrtime.bigint();
  const r = fn();
  return { r, s: Number(process.hrtime.bigint() - t) / 1e9 };
}

function kproxc(args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`kproxc ${args.join(' ')}: ${r.status}\n${r.stderr}`);
  return r;
}

function nft(args, input) {
  return execFileSync('ip', ['netns', 'exec', netns, 'nft', ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => `${xs.map((x) => x.toFixed(2)).join(', ')} (median ${median(xs).toFixed(2)} s)`;
const write = (name, cluster) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, snapshotYaml(cluster));
  return f;
};

const base = makeCluster(n);
const baseFile = write('base.yaml', base);
const compileOut = path.join(dir, 'compile.nft');
const compileTimes = [];
for (let i = 0; i < runs; i++) compileTimes.push(timed(() => kproxc(['compile', baseFile, '-o', compileOut])).s);
console.log(`services: ${n}; compile: ${fmt(compileTimes)}; ${fs.statSync(compileOut).size} bytes`);

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
    const times = [];
    let out = '';
    for (let i = 0; i < runs; i++) {
      const t = timed(() => kproxc(['diff', file, '--live', liveFile]));
      times.push(t.s);
      out = t.r.stdout;
    }
    outputs[name] = { file, out };
    const lines = out === '' ? 0 : out.split('\n').length - 1;
    console.log(`diff, ${name}: ${lines} lines; ${fmt(times)}`);
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
