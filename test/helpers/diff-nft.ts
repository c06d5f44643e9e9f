// Shared steps of the diff system tests: compile a snapshot, diff a namespace's live state
// against it, apply, and compare listings the way `diff` promises (our tables only, sorted
// by name, members of timeout sets left out: they are the kernel's dynamic state).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, expect } from 'vitest';
import { kproxc } from './kproxc.js';
import { canonicalListing, type Netns } from './netns.js';

type Item = Record<string, Record<string, unknown>>;

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `kproxc-diff-${prefix}-`));
}

/** A temporary directory for a describe block, removed after it, and a writer of files in it. */
export function tempFiles(prefix: string): { dir: string; write: (name: string, text: string) => string } {
  const dir = tempDir(prefix);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  return { dir, write };
}

/** Our tables (ip/ip6 kube-proxy) of a listing, canonical, without dynamic set members. */
export function ourState(listingJson: string, table = 'kube-proxy'): unknown[] {
  return (canonicalListing(listingJson) as Item[])
    .filter((x) => {
      const o = Object.values(x)[0];
      return (o.family === 'ip' || o.family === 'ip6') && (o.table ?? o.name) === table;
    })
    .map((x) => {
      const kind = Object.keys(x)[0];
      const o = x[kind];
      if ((kind === 'set' || kind === 'map') && Array.isArray(o.flags) && o.flags.includes('timeout')) {
        const { elem: _e, ...rest } = o;
        return { [kind]: rest };
      }
      return x;
    });
}

export function notOurs(listingJson: string, table = 'kube-proxy'): unknown[] {
  return (canonicalListing(listingJson) as Item[]).filter((x) => {
    const o = Object.values(x)[0];
    return !((o.family === 'ip' || o.family === 'ip6') && (o.table ?? o.name) === table);
  });
}

export async function compileText(snapshotFile: string, args: string[] = []): Promise<string> {
  const r = await kproxc(['compile', snapshotFile, ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

export interface DiffRun {
  now: string;
  later: string;
  code: number;
}

/** `kproxc diff` against the namespace's current listing. */
export async function diffAgainst(ns: Netns, dir: string, snapshotFile: string, opts: { twoPhase?: boolean; args?: string[] } = {}): Promise<DiffRun> {
  const liveFile = path.join(dir, 'live.json');
  fs.writeFileSync(liveFile, ns.nft(['-j', 'list', 'ruleset']));
  const laterFile = path.join(dir, 'later.nft');
  const args = ['diff', snapshotFile, '--live', liveFile, '--exit-code', ...(opts.args ?? [])];
  if (opts.twoPhase) args.push('--two-phase', laterFile);
  const r = await kproxc(args);
  expect(r.stderr).toBe('');
  expect([0, 1]).toContain(r.code);
  const later = opts.twoPhase ? fs.readFileSync(laterFile, 'utf8') : '';
  expect(r.code).toBe(r.stdout === '' && later === '' ? 0 : 1);
  return { now: r.stdout, later, code: r.code };
}

/** Applies a diff (both phases), then checks it converged: equal to a fresh load, and empty on a second diff. */
export async function applyAndCheck(live: Netns, fresh: Netns, dir: string, snapshotFile: string, d: DiffRun, args: string[] = []): Promise<void> {
  if (d.now) live.nft(['-f', '-'], d.now);
  if (d.later) live.nft(['-f', '-'], d.later);
  fresh.nft(['flush', 'ruleset']);
  fresh.nft(['-f', '-'], await compileText(snapshotFile, args));
  expect(ourState(live.nft(['-j', 'list', 'ruleset']))).toEqual(ourState(fresh.nft(['-j', 'list', 'ruleset'])));
  const again = await diffAgainst(live, dir, snapshotFile, { args });
  expect(again.now, 'a second diff is empty').toBe('');
  expect(again.code).toBe(0);
}

/**
 * A transaction's text with each element operation on its own line: `diff` prints a run of
 * additions to (or deletions from) one set as one command, `VERB element T S { E1, E2 }`;
 * this writes it as `VERB element T S { E1 }` and `VERB element T S { E2 }`, so that a test
 * can look for one element's operation. (The members of kproxc's tables hold no ", ".)
 */
export function elementPerLine(tx: string): string {
  return tx.replace(/^((?:add|delete) element \S+ \S+ \S+) \{ (.*) \}$/gm, (_, head: string, members: string) =>
    members
      .split(', ')
      .map((m) => `${head} { ${m} }`)
      .join('\n'),
  );
}
