// Helpers for the ovs diff's system tests: a second bridge for fresh loads beside the live
// one, dumps as the diff reads them, the diff run through the CLI, and the bridge's state
// split into what kproxc owns (flows and groups, compared with a fresh load) and what OVS
// learned (affinity flows, which a fresh load would not have).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { tempDir } from './diff-nft.js';
import { kproxc } from './kproxc.js';
import { BRIDGE, ovsForSuite, sleepMs, type Ovs } from './ovs.js';

export const FRESH = 'br-fresh';

/** Adds the bridge that fresh compiles are loaded into, in the same daemons. */
/** A suite's private Open vSwitch with a fresh bridge, and a temp dir for its files: both gone after it. */
export function bridgeForSuite(tag: string): { readonly ovs: Ovs; readonly dir: string } {
  const ovs = ovsForSuite();
  let dir = '';
  beforeAll(() => {
    addFreshBridge(ovs());
    dir = tempDir(tag);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    get ovs() {
      return ovs();
    },
    get dir() {
      return dir;
    },
  };
}

export function addFreshBridge(ovs: Ovs): void {
  ovs.vsctl(['add-br', FRESH, '--', 'set', 'bridge', FRESH, 'datapath_type=dummy', 'fail-mode=secure', 'protocols=OpenFlow10,OpenFlow13,OpenFlow15']);
}

export interface Dumps {
  flows: string;
  groups: string;
}

/**
 * ovs-ofctl on a busy machine now and then fails to connect to the bridge's management
 * socket (EPIPE) while ovs-vswitchd is fine; that, and only that, is tried again.
 */
function ofctlRetried(ovs: Ovs, args: string[]): string {
  for (let attempt = 1; ; attempt++) {
    try {
      return ovs.ofctl(args);
    } catch (e) {
      if (attempt >= 3 || !/failed to open socket \(Broken pipe\)/.test((e as Error).message)) throw e;
      sleepMs(200);
    }
  }
}

export function dumps(ovs: Ovs, bridge = BRIDGE): Dumps {
  return { flows: ofctlRetried(ovs, ['--no-stats', 'dump-flows', bridge]), groups: ofctlRetried(ovs, ['dump-groups', bridge]) };
}

/** A learned affinity flow: table 14 with a hard_timeout. */
export const isLearnedLine = (l: string) => / table=14, hard_timeout=/.test(l);

const lines = (dump: string) =>
  dump
    .split('\n')
    .filter((l) => l.startsWith(' '))
    .map((l) => l.trim())
    .sort();

/** Our cookie, or a group's learn cookie. */
const OURS = /^cookie=0x103[0-9a-f]{10}, /;

/** What kproxc owns on a bridge (learned flows and others' flows aside), sorted. */
export function owned(d: Dumps): { flows: string[]; groups: string[] } {
  return { flows: lines(d.flows).filter((l) => OURS.test(l) && !isLearnedLine(' ' + l)), groups: lines(d.groups) };
}

export function learned(d: Dumps): string[] {
  return lines(d.flows).filter((l) => isLearnedLine(' ' + l));
}

/** The diff from the bridge's dumps to the snapshot, through the CLI (exit code 0 or 1 with --exit-code). */
export async function diffTo(dir: string, snapshot: string, d: Dumps, extra: string[] = []): Promise<{ bundle: string; stderr: string; code: number }> {
  const flows = path.join(dir, 'flows.txt');
  const groups = path.join(dir, 'groups.txt');
  fs.writeFileSync(flows, d.flows);
  fs.writeFileSync(groups, d.groups);
  const r = await kproxc(['diff', '--backend', 'ovs', '--live-flows', flows, '--live-groups', groups, snapshot, ...extra]);
  if (r.code !== 0 && r.code !== 1) throw new Error(`kproxc diff --backend ovs failed (${r.code}): ${r.stderr}`);
  return { bundle: r.stdout, stderr: r.stderr, code: r.code };
}

export async function compileBundle(snapshot: string): Promise<string> {
  const r = await kproxc(['compile', '--backend', 'ovs', snapshot]);
  if (r.code !== 0) throw new Error(`compile failed: ${r.stderr}`);
  return r.stdout;
}

/** Loads a bundle into a bridge (an empty bundle is not loaded: there is nothing to do). */
export function applyBundle(ovs: Ovs, text: string, bridge = BRIDGE): void {
  if (text === '') return;
  const file = path.join(ovs.dir, `diff-${bridge}.ofctl`);
  fs.writeFileSync(file, text);
  ovs.ofctl(['bundle', bridge, file]);
}

/**
 * Diffs the live bridge to the snapshot and applies the bundle; then the live bridge owns
 * exactly what a fresh load of the snapshot holds, and a second diff is empty. Returns the
 * bundle applied.
 */
export async function stepTo(ovs: Ovs, dir: string, snapshot: string): Promise<string> {
  const { bundle } = await diffTo(dir, snapshot, dumps(ovs));
  applyBundle(ovs, bundle);
  applyBundle(ovs, await compileBundle(snapshot), FRESH);
  expect(owned(dumps(ovs))).toEqual(owned(dumps(ovs, FRESH)));
  const again = await diffTo(dir, snapshot, dumps(ovs), ['--exit-code']);
  expect(again.bundle, 'a second diff is empty').toBe('');
  expect(again.code).toBe(0);
  return bundle;
}
