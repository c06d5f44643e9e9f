// Private network namespaces for system tests. Each is created and removed by the test
// that uses it; nothing here touches the host's own ruleset.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

let counter = 0;

export interface Netns {
  name: string;
  /** Runs a command inside the namespace; throws with its stderr when it fails. */
  exec(cmd: string, args: string[], input?: string): string;
  /** Like exec, but returns status and output instead of throwing. */
  run(cmd: string, args: string[], input?: string): { status: number; stdout: string; stderr: string };
  nft(args: string[], input?: string): string;
  destroy(): void;
}

/**
 * A new namespace named kproxc-<prefix>-<pid>-<n> (then -<role> when given, to tell the
 * namespaces of one topology apart); give each suite its own prefix.
 */
export function createNetns(prefix: string, role?: string): Netns {
  const name = `kproxc-${prefix}-${process.pid}-${counter++}${role ? `-${role}` : ''}`;
  execFileSync('ip', ['netns', 'add', name]);
  const run = (cmd: string, args: string[], input?: string) => {
    // Node gives a child a socket, not a pipe, as standard input, and nft cannot open
    // /dev/stdin on a socket; so input for "-" goes through a temporary file.
    let tmp: string | undefined;
    if (input !== undefined && args.includes('-')) {
      tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-in-')), 'input');
      fs.writeFileSync(tmp, input);
      args = args.map((a) => (a === '-' ? tmp! : a));
      input = undefined;
    }
    try {
      const r = spawnSync('ip', ['netns', 'exec', name, cmd, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
      return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? String(r.error ?? '') };
    } finally {
      if (tmp) fs.rmSync(path.dirname(tmp), { recursive: true, force: true });
    }
  };
  const exec = (cmd: string, args: string[], input?: string) => {
    const r = run(cmd, args, input);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${name} (${r.status}): ${r.stderr}`);
    return r.stdout;
  };
  return {
    name,
    exec,
    run,
    nft: (args, input) => exec('nft', args, input),
    destroy: () => {
      spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    },
  };
}

/** Runs fn with a fresh namespace and always removes it. */
export async function withNetns<T>(prefix: string, fn: (ns: Netns) => T | Promise<T>): Promise<T> {
  const ns = createNetns(prefix);
  try {
    return await fn(ns);
  } finally {
    ns.destroy();
  }
}

/**
 * `nft -j list ruleset` as a canonical value: handles dropped, tables, chains and sets
 * sorted by name (nft lists them in creation order), rules kept in chain order.
 */
export function canonicalListing(json: string): unknown {
  const doc = JSON.parse(json) as { nftables: Record<string, Record<string, unknown>>[] };
  const items = doc.nftables.filter((x) => !('metainfo' in x));
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) if (k !== 'handle') out[k] = strip((v as Record<string, unknown>)[k]);
      return out;
    }
    return v;
  };
  const key = (x: Record<string, Record<string, unknown>>) => {
    const kind = Object.keys(x)[0];
    const o = x[kind];
    const order = kind === 'table' ? 0 : kind === 'chain' ? 1 : kind === 'set' || kind === 'map' ? 2 : 3;
    return [String(o.family), String(o.table ?? o.name), order, kind === 'rule' ? String(o.chain) : String(o.name)];
  };
  const indexed = items.map((x, i) => ({ x, i, k: key(x) }));
  indexed.sort((a, b) => {
    for (let j = 0; j < 4; j++) {
      if (a.k[j] < b.k[j]) return -1;
      if (a.k[j] > b.k[j]) return 1;
    }
    return a.i - b.i; // rules keep their order within a chain
  });
  return indexed.map(({ x }) => strip(x));
}
