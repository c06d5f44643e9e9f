// The processes of the data plane: echo servers (long-lived, one per namespace that holds
// endpoints) and probes (one short run per batch of connections). Both run as
// `ip netns exec NS node SCRIPT`; ip execs the command in place, so the pid we hold is the
// node process itself and stopping it by pid stops the server.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Netns } from '../netns.js';
import type { Listener } from './plan.js';
import type { Proto } from './snapshot.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.join(HERE, 'echo-server.mjs');
const PROBE = path.join(HERE, 'probe.mjs');
const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 3_000;

export interface ServerListener extends Listener {
  pod?: string;
}

export interface Server {
  ns: string;
  pid: number;
  stop(): Promise<void>;
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Starts an echo server in a namespace and waits until every listener is bound. */
export async function startServer(ns: Netns, name: string, listeners: ServerListener[]): Promise<Server> {
  const spec = JSON.stringify({ name, listeners, maxSeconds: 900 });
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, SERVER, spec], { stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the echo server in ${ns.name}`);
  const stop = async () => {
    child.stdin?.end();
    if (await exited(child, 100)) return;
    process.kill(pid, 'SIGTERM');
    if (await exited(child, STOP_TIMEOUT_MS)) return;
    process.kill(pid, 'SIGKILL');
    await exited(child, STOP_TIMEOUT_MS);
  };
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const ready = await new Promise<boolean>((resolve) => {
    let out = '';
    const t = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) {
        clearTimeout(t);
        resolve(true);
      }
    });
    child.once('exit', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
  if (!ready) {
    await stop();
    throw new Error(`echo server ${name} in ${ns.name} did not start: ${stderr.trim() || 'no answer'}`);
  }
  // The pid must be the server itself, or stopping it by pid would stop only `ip`.
  const exe = fs.readlinkSync(`/proc/${pid}/exe`);
  if (exe !== fs.realpathSync(process.execPath)) {
    await stop();
    throw new Error(`echo server pid ${pid} is ${exe}, not node: ip netns exec forked`);
  }
  return { ns: ns.name, pid, stop };
}

export interface ProbeJob {
  proto: Proto;
  host: string;
  port: number;
  /** Local source address to connect from (one of the namespace's own). */
  from?: string;
  /** UDP only: attempt i sends from this port + i (see Cluster.probe for why). */
  sourcePort?: number;
  count: number;
  timeoutMs: number;
  /** All attempts at once: for probes expected to time out. */
  parallel?: boolean;
  /** Stop after this many failed attempts (default 2); raise it when failures are expected. */
  stopAfterFailures?: number;
}

export type ProbeResult =
  | { ok: true; pod: string; addr: string; port: number; peer: string; replyFrom?: string; ms: number }
  | { ok: false; error: string; ms: number; localPort?: number };

/** Runs probe jobs in a namespace; resolves with one result list per job. */
export function probe(ns: Netns, jobs: ProbeJob[]): Promise<ProbeResult[][]> {
  const bound = jobs.reduce((ms, j) => ms + (j.parallel ? 1 : j.count) * j.timeoutMs, 0) + 15_000;
  return new Promise((resolve, reject) => {
    execFile(
      'ip',
      ['netns', 'exec', ns.name, process.execPath, PROBE, JSON.stringify(jobs)],
      { timeout: bound, killSignal: 'SIGKILL', maxBuffer: 64 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`probe in ${ns.name} failed: ${err.message}\n${stderr}`));
        resolve(JSON.parse(stdout) as ProbeResult[][]);
      },
    );
  });
}
