// Golden diff cases: fixtures/diff/<case>.yaml is the snapshot to diff to; its header says
// how the live state was made (`# diff-before: FILE|none`, `# diff-drift: NFT COMMAND`
// lines applied after loading it, `# diff-two-phase`). fixtures/diff/<case>.live.json is
// that state as real nft listed it; golden/diff/<case>.diff.nft (and .later.nft) the diff.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES, fixtureArgs } from './fixtures.js';
import { kproxc } from './kproxc.js';
import type { Netns } from './netns.js';

export const DIFF_FIXTURES = path.join(FIXTURES, 'diff');

export interface DiffCase {
  name: string;
  file: string;
  args: string[];
  before: string | null;
  drift: string[];
  twoPhase: boolean;
  liveFile: string;
}

export function listDiffCases(): DiffCase[] {
  return fs
    .readdirSync(DIFF_FIXTURES)
    .filter((n) => n.endsWith('.yaml'))
    .sort()
    .map((n) => {
      const file = path.join(DIFF_FIXTURES, n);
      const text = fs.readFileSync(file, 'utf8');
      const header = (key: string) => [...text.matchAll(new RegExp(`^#\\s*${key}:\\s*(.*)$`, 'gm'))].map((m) => m[1].trim());
      const before = header('diff-before')[0];
      if (before === undefined) throw new Error(`${n}: no "# diff-before:" header`);
      const name = n.replace(/\.yaml$/, '');
      return {
        name,
        file,
        // The captured live listings are kube-proxy 1.35's tables.
        args: [...fixtureArgs(text), '--kube-proxy-version', '1.35'],
        before: before === 'none' ? null : path.resolve(DIFF_FIXTURES, before),
        drift: header('diff-drift'),
        twoPhase: /^#\s*diff-two-phase\s*$/m.test(text),
        liveFile: path.join(DIFF_FIXTURES, `${name}.live.json`),
      };
    });
}

/** Tables that are not ours and must never be read or touched: one even shares our name. */
export const FOREIGN_TABLES = [
  'add table inet foreign',
  'add chain inet foreign input { type filter hook input priority 0 ; policy accept ; }',
  'add rule inet foreign input tcp dport 22 counter accept',
  'add table inet kube-proxy',
  'add chain inet kube-proxy c',
  'add rule inet kube-proxy c ct state established,related counter accept',
].join('\n');

/** Builds the case's live state in a fresh namespace: foreign tables, the before state, the drift. */
export async function buildLive(ns: Netns, c: DiffCase): Promise<void> {
  ns.nft(['-f', '-'], FOREIGN_TABLES + '\n');
  if (c.before) {
    const r = await kproxc(['compile', c.before, ...c.args]);
    if (r.code !== 0) throw new Error(r.stderr);
    ns.nft(['-f', '-'], r.stdout);
  }
  if (c.drift.length) ns.nft(['-f', '-'], c.drift.join('\n') + '\n');
}

/** A listing with the countdown of timed set members (`expires`) removed. */
export function withoutExpiry(listingJson: string): unknown {
  return JSON.parse(listingJson, (k, v) => (k === 'expires' ? undefined : v));
}
