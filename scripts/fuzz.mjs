#!/usr/bin/env node
// npm run fuzz [-- --runs N --seed S --no-nft]: mutated snapshots (scripts/fuzz/) through the
// built CLI in-process (every fourth also with --backend ovs, which must agree on exit 0 or
// 2; the others compiled to kube-proxy 1.37's, 1.36's and 1.35's tables and fast-load's in
// turn). Every run must exit 0 with a ruleset that touches only our tables
// (and loads into real nft, in a private network namespace), or exit 2 with nothing on
// standard output and positioned diagnostics. Prints counts, and each failure with its
// input (also written to a temporary directory). Exits 1 when anything failed.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { run } from '../dist/cli/main.js';
import { clusterArb, formatArb } from './fuzz/cluster.mjs';
import { mutate, mutationArb } from './fuzz/mutate.mjs';
import { judge } from './fuzz/snapshot.mjs';

function flag(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}
const RUNS = Number(flag('--runs', '100000'));
const SEED = Number(flag('--seed', String(Date.now() % 1_000_000)));
const USE_NFT = !process.argv.includes('--no-nft');
const BATCH = 50; // clusters generated per fast-check sample
const PER_CLUSTER = 4; // mutations of each cluster (generating one costs more than compiling it)
const LOAD_BATCH = 50; // rulesets per nft transaction

// The tables an input is compiled to, one after another across runs: the default layout
// (kube-proxy 1.37's table), the older releases' tables, and fast-load. Each must load.
const TABLE_FORMS = [[], ['--kube-proxy-version', '1.36'], ['--kube-proxy-version', '1.35'], ['--layout', 'fast-load']];

async function compile(text, backend = 'nftables', form = []) {
  let stdout = '';
  let stderr = '';
  try {
    const code = await run(['compile', '-', '--backend', backend, ...form], { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => Buffer.from(text) });
    return { code, stdout, stderr };
  } catch (e) {
    return { code: -1, stdout, stderr, threw: String(e?.stack ?? e) };
  }
}

/** A private namespace for loading outputs; removed on exit, whatever happens. */
function netns() {
  const name = `kproxc-inp-fuzz-${process.pid}`;
  execFileSync('ip', ['netns', 'add', name]);
  const remove = () => spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
  process.on('exit', remove);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-inp-fuzz-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    load(text) {
      const file = path.join(dir, 'ruleset.nft');
      fs.writeFileSync(file, text);
      const r = spawnSync('ip', ['netns', 'exec', name, 'nft', '-f', file], { encoding: 'utf8' });
      return r.status === 0 ? null : (r.stderr || `nft exited ${r.status}`).trim();
    },
  };
}

const counts = { runs: 0, exit0: 0, exit2: 0, failures: 0, loaded: 0, loadBatches: 0, ovs: 0 };
const byOp = {};
const failures = [];
let failDir;

function fail(problem, text, where) {
  counts.failures++;
  failDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-fuzz-failures-'));
  const file = path.join(failDir, `${counts.failures}.yaml`);
  fs.writeFileSync(file, text);
  failures.push({ problem, file, where });
  process.stderr.write(`FAILURE (${where}): ${problem}\n  input (${file}):\n${text.slice(0, 2000).replace(/^/gm, '    ')}\n`);
}

const ns = USE_NFT ? netns() : null;
let pending = []; // { text, stdout, where }
const seenOutputs = new Set();
let formTurn = 0;

function flushLoads() {
  if (!ns || pending.length === 0) return;
  counts.loadBatches++;
  // Each ruleset starts by replacing our tables, so a batch loads as one transaction.
  const err = ns.load(pending.map((p) => p.stdout).join(''));
  if (err) {
    for (const p of pending) {
      const e = ns.load(p.stdout);
      if (e) fail(`output does not load into nft: ${e.split('\n')[0]}`, p.text, p.where);
    }
  }
  counts.loaded += pending.length;
  pending = [];
}

const started = Date.now();
const input = fc.tuple(clusterArb, formatArb, fc.array(mutationArb, { minLength: PER_CLUSTER, maxLength: PER_CLUSTER }));
for (let batch = 0; counts.runs < RUNS; batch++) {
  const samples = fc.sample(input, { seed: SEED + batch, numRuns: BATCH });
  const cases = samples.flatMap(([objects, format, ms], i) => ms.map((m, j) => ({ objects, format, m, where: `seed ${SEED + batch}, sample ${i}.${j}, ${format}, ${m.op}` })));
  for (const { objects, format, m, where } of cases.slice(0, RUNS - counts.runs)) {
    const text = mutate(objects, format, m);
    // Every fourth input also goes through the OVS backend (and is not loaded): the others
    // take the table forms in turn.
    const viaOvs = (counts.runs + 1) % 4 === 0;
    const form = viaOvs ? [] : TABLE_FORMS[formTurn++ % TABLE_FORMS.length];
    const r = await compile(text, 'nftables', form);
    const label = form.length ? `${where}, ${form.join(' ')}` : where;
    counts.runs++;
    byOp[m.op] ??= { runs: 0, exit0: 0 };
    byOp[m.op].runs++;
    if (r.code === 0) {
      counts.exit0++;
      byOp[m.op].exit0++;
    } else if (r.code === 2) counts.exit2++;
    const problem = judge(text, r);
    if (problem) fail(problem, text, label);
    // The OVS backend: the same input checks, its own writer.
    if (viaOvs) {
      const o = await compile(text, 'ovs');
      counts.ovs++;
      const ovsProblem = judge(text, o, 'ovs') ?? (o.code !== r.code ? `exit ${o.code} with --backend ovs, ${r.code} with nftables` : null);
      if (ovsProblem) fail(ovsProblem, text, `${where}, --backend ovs`);
    }
    else if (r.code === 0) {
      const h = createHash('sha256').update(r.stdout).digest('hex');
      if (!seenOutputs.has(h)) {
        seenOutputs.add(h);
        pending.push({ text, stdout: r.stdout, where: label });
        if (pending.length >= LOAD_BATCH) flushLoads();
      }
    }
  }
  // Let the event loop run between batches: the compiles resolve in microtasks alone, which
  // would starve the signal handlers (Ctrl-C must still remove the namespace).
  await new Promise((resolve) => setImmediate(resolve));
  if (counts.runs % 10000 < BATCH * PER_CLUSTER) {
    process.stderr.write(`${counts.runs} runs, ${counts.exit0} exit 0, ${counts.exit2} exit 2, ${counts.failures} failures (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
}
flushLoads();

const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`fuzz: seed ${SEED}, ${counts.runs} mutated inputs in ${seconds} s`);
console.log(`  exit 0 (still valid): ${counts.exit0}; exit 2 (rejected): ${counts.exit2}; also through --backend ovs: ${counts.ovs}`);
console.log(`  distinct valid outputs loaded into nft: ${USE_NFT ? `${counts.loaded} in ${counts.loadBatches} transactions` : 'skipped (--no-nft)'}`);
console.log(`  by mutation: ${Object.entries(byOp).map(([op, c]) => `${op} ${c.runs} (${c.exit0} valid)`).join(', ')}`);
console.log(`  failures: ${counts.failures}${counts.failures ? ` (inputs in ${failDir})` : ''}`);
for (const f of failures.slice(0, 50)) console.log(`    ${f.where}: ${f.problem} [${f.file}]`);
process.exitCode = counts.failures ? 1 : 0;
