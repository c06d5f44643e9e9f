// The benchmark's private network namespaces and the commands timed in them: namespaces
// are named <prefix>-<pid>-<n> (kproxc-bench by default) and removed when done, when a
// command fails, and on exit or SIGINT/SIGTERM/SIGHUP (the running command is then killed
// by its process group, which this module started). Each timed command runs under GNU
// time, whose user + system CPU is where nft's and the kernel's work is counted.
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';

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

/** Runs fn in a new private namespace `<prefix>-<pid>-<n>`, removed after it, whatever happens. */
export async function withNamespace(fn, prefix = 'kproxc-bench') {
  guard();
  const ns = `${prefix}-${process.pid}-${counter++}`;
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
 * Runs a command inside the namespace (or, with ns null, outside any) as its own process
 * group (so that a signal can stop all of it, not only GNU time), asynchronously (so that
 * the signal handlers run while it does). Resolves to its exit status and output.
 */
export function run(ns, args, { timed = false } = {}) {
  const argv = ns === null ? args : ['ip', 'netns', 'exec', ns, ...args];
  // %M: the peak resident memory (KB), the figure `/usr/bin/time -v` calls its maximum resident set size.
  const [cmd, ...rest] = timed ? ['/usr/bin/time', '-f', '@time %e %U %S %M', ...argv] : argv;
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
 * One command under GNU time: wall seconds (measured here, finer than GNU time's
 * hundredths), CPU seconds (user + system, GNU time's, in hundredths), peak RSS (MB), the
 * load average then, and its standard output. Exit statuses other than `ok` fail.
 */
export async function timed(ns, args, ok = [0]) {
  const t = process.hrtime.bigint();
  const r = await run(ns, args, { timed: true });
  const wall = Number(process.hrtime.bigint() - t) / 1e9;
  const m = /@time (\S+) (\S+) (\S+) (\d+)\s*$/.exec(r.stderr);
  if (!ok.includes(r.status) || !m) throw new Error(`${args.join(' ')} failed in ${ns ?? 'no namespace'} (${r.status}):\n${r.stderr.slice(0, 4000)}`);
  const cpu = Number((Number(m[2]) + Number(m[3])).toFixed(2));
  return { wall: Number(wall.toFixed(4)), cpu, rssMB: Math.round(Number(m[4]) / 1024), load: Number(os.loadavg()[0].toFixed(2)), stdout: r.stdout };
}

/** One `nft -f FILE` in the namespace, timed (without its empty output); `prefix` runs before nft (e.g. `env VAR=value`). */
export async function timedLoad(ns, file, prefix = []) {
  const { stdout, ...t } = await timed(ns, [...prefix, 'nft', '-f', file]);
  return t;
}

/** An argument as a shell reads it back: quoted when empty or holding more than plain characters. */
export function shellWord(a) {
  return /^[\w,.=\/-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`;
}

export const sha = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

export function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

export function writeJson(file, value) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(value));
  fs.renameSync(`${file}.tmp`, file);
}

