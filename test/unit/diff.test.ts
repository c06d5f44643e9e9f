// The diff on hand-made tables: which operations, in which order (the order measured on
// nft 1.0.6, see src/diff/diff.ts), and when a chain is rewritten rule by rule.
import { describe, expect, it } from 'vitest';
import { parseIP } from '../../src/net/ip.js';
import { diffTables } from '../../src/diff/diff.js';
import { eq, goto, jump, payload, setref, type Stmt } from '../../src/nft/expr.js';
import type { BaseChainSpec } from '../../src/nft/objects.js';
import { statementsBuilder, type TableContents } from '../../src/nft/ruleset.js';
import { transactionText } from '../../src/nft/text.js';

const ip = (s: string) => parseIP(s)!;
const drop: Stmt = { t: 'verdict', v: { kind: 'drop' } };
const saddr = (a: string): Stmt => eq(payload('ip', 'saddr'), { t: 'ip', ip: ip(a) });
const NAT: BaseChainSpec = { type: 'nat', hook: 'prerouting', priority: -100 };

interface Spec {
  chains?: Record<string, Stmt[][]>;
  base?: Record<string, BaseChainSpec>;
  sets?: Record<string, { timeout?: number; interval?: boolean; elements?: string[]; comment?: string }>;
  map?: Record<string, string>; // key address -> goto target, in map "vm"
}

/** A table from a compact description; rules of a live table get handles 1, 2, ... chain by chain in name order. */
function table(spec: Spec, withHandles = false): TableContents {
  const b = statementsBuilder({ family: 'ip', name: 'kube-proxy', comment: 'rules for kube-proxy' });
  for (const [name, base] of Object.entries(spec.base ?? {})) b.chain({ name, base });
  for (const name of Object.keys(spec.chains ?? {})) if (!b.hasChain(name)) b.chain({ name });
  for (const [name, s] of Object.entries(spec.sets ?? {})) {
    b.set({
      name,
      kind: 'set',
      keyType: ['ipv4_addr'],
      ...(s.timeout !== undefined ? { flags: ['dynamic', 'timeout'], timeoutSeconds: s.timeout } : {}),
      ...(s.interval ? { flags: ['interval'] } : {}),
      ...(s.comment !== undefined ? { comment: s.comment } : {}),
    });
    for (const e of s.elements ?? []) b.element({ set: name, key: [{ t: 'ip', ip: ip(e) }] });
  }
  if (spec.map) {
    b.set({ name: 'vm', kind: 'map', keyType: ['ipv4_addr'] });
    for (const [k, target] of Object.entries(spec.map)) b.element({ set: 'vm', key: [{ t: 'ip', ip: ip(k) }], value: { kind: 'goto', target } });
  }
  for (const [chain, rules] of Object.entries(spec.chains ?? {})) for (const stmts of rules) b.rule({ chain, stmts });
  const t = b.finish();
  if (withHandles) {
    let h = 1;
    const byName = [...t.chains].sort((a, b) => (a.chain.name < b.chain.name ? -1 : 1));
    for (const c of byName) c.rules = c.rules.map((r) => ({ ...r, handle: h++ }));
    // The listing never shows "dynamic"; the reader gives flags as listed.
    for (const s of t.sets) if (s.set.flags) s.set = { ...s.set, flags: s.set.flags.filter((f) => f !== 'dynamic') };
  }
  return t;
}

function diff(desired: Spec, live: Spec | null, twoPhase = false): { now: string[]; later: string[] } {
  const r = diffTables([table(desired)], live ? [table(live, true)] : [], { twoPhase });
  const lines = (t: string) => t.split('\n').filter(Boolean).map((l) => l.replace(' ip kube-proxy ', ' '));
  return { now: lines(transactionText(r.now)), later: lines(transactionText(r.later)) };
}

describe('diff', () => {
  const base: Spec = {
    base: { pre: NAT },
    chains: { pre: [[jump('svc')]], svc: [[saddr('1.1.1.1'), drop], [goto('ep1')]], ep1: [[drop]] },
    map: { '10.0.0.1': 'svc' },
    sets: { aff: { timeout: 300 }, ips: { elements: ['10.0.0.1'] } },
  };

  it('nothing for identical tables', () => {
    expect(diff(base, base)).toEqual({ now: [], later: [] });
  });

  it('the whole table when it is missing', () => {
    const { now } = diff(base, null);
    expect(now[0]).toBe('add table { comment "rules for kube-proxy" ; }');
    expect(now.filter((l) => l.startsWith('add chain'))).toHaveLength(3);
    expect(now.indexOf('add chain pre { type nat hook prerouting priority -100 ; }')).toBeLessThan(now.indexOf('add rule pre jump svc'));
  });

  it('leaves live tables of other families alone', () => {
    const r = diffTables([table(base)], [{ ...table(base, true), table: { family: 'ip6', name: 'kube-proxy' } }]);
    expect(transactionText(r.now).split('\n')[0]).toBe('add table ip kube-proxy { comment "rules for kube-proxy" ; }');
    expect(transactionText(r.now)).not.toContain('ip6');
  });

  it('a new endpoint: chain first, then the element pointing at it, then its rules', () => {
    const next: Spec = { ...base, chains: { ...base.chains, ep2: [[drop]] }, map: { '10.0.0.1': 'svc', '10.0.0.2': 'ep2' } };
    expect(diff(next, base).now).toEqual(['add chain ep2', 'add element vm { 10.0.0.2 : goto ep2 }', 'add rule ep2 drop']);
  });

  it('a changed map value is deleted, then added', () => {
    const next: Spec = { ...base, chains: { ...base.chains, ep2: [[drop]] }, map: { '10.0.0.1': 'ep2' } };
    expect(diff(next, base).now).toEqual(['add chain ep2', 'delete element vm { 10.0.0.1 }', 'add element vm { 10.0.0.1 : goto ep2 }', 'add rule ep2 drop']);
  });

  it("one set's changes are one command a verb: its deletes, then its adds; another set's its own", () => {
    const live: Spec = { ...base, chains: { ...base.chains, ep2: [[drop]] }, map: { '10.0.0.1': 'svc', '10.0.0.2': 'svc', '10.0.0.3': 'svc', '10.0.0.4': 'svc' } };
    const next: Spec = {
      ...live,
      map: { '10.0.0.1': 'ep2', '10.0.0.2': 'svc', '10.0.0.3': 'ep2', '10.0.0.5': 'svc' },
      sets: { ...base.sets, ips: { elements: ['10.0.0.1', '10.0.0.7', '10.0.0.8'] } },
    };
    expect(diff(next, live).now).toEqual([
      'add element ips { 10.0.0.7, 10.0.0.8 }',
      'delete element vm { 10.0.0.1, 10.0.0.3 }',
      'add element vm { 10.0.0.1 : goto ep2, 10.0.0.3 : goto ep2, 10.0.0.5 : goto svc }',
      'delete element vm { 10.0.0.4 }',
    ]);
  });

  it('a stale chain: its referrers go first, then it is flushed and deleted (or deleted later with two phases)', () => {
    const next: Spec = { ...base, chains: { pre: base.chains!.pre, svc: [[saddr('1.1.1.1'), drop]] } };
    expect(diff(next, base)).toEqual({ now: ['delete rule svc handle 4', 'flush chain ep1', 'delete chain ep1'], later: [] });
    expect(diff(next, base, true)).toEqual({ now: ['delete rule svc handle 4', 'flush chain ep1'], later: ['delete chain ep1'] });
  });

  it('rule by rule when shorter: an appended rule, a removed one', () => {
    const rules = (n: number[]) => n.map((i) => [saddr(`1.1.1.${i}`), drop]);
    expect(diff({ chains: { c: rules([1, 2, 3, 4]) } }, { chains: { c: rules([1, 2, 3]) } }).now).toEqual(['add rule c ip saddr 1.1.1.4 drop']);
    expect(diff({ chains: { c: rules([1, 3, 4]) } }, { chains: { c: rules([1, 2, 3, 4]) } }).now).toEqual(['delete rule c handle 2']);
    // Reordered: one delete and one append keep the order right.
    expect(diff({ chains: { c: rules([1, 3, 4, 2]) } }, { chains: { c: rules([1, 2, 3, 4]) } }).now).toEqual([
      'delete rule c handle 2',
      'add rule c ip saddr 1.1.1.2 drop',
    ]);
  });

  it('flush and refill when that is shorter', () => {
    const rules = (n: number[]) => n.map((i) => [saddr(`1.1.1.${i}`), drop]);
    expect(diff({ chains: { c: rules([5, 1, 2]) } }, { chains: { c: rules([1, 2, 3]) } }).now).toEqual([
      'flush chain c',
      'add rule c ip saddr 1.1.1.5 drop',
      'add rule c ip saddr 1.1.1.1 drop',
      'add rule c ip saddr 1.1.1.2 drop',
    ]);
  });

  it('a changed rule comment is a changed rule (on a tie, flush and refill)', () => {
    const live = table({ chains: { c: [[drop]] } }, true);
    const desired = table({ chains: { c: [[drop]] } });
    desired.chains[0].rules[0] = { ...desired.chains[0].rules[0], comment: 'why' };
    expect(transactionText(diffTables([desired], [live]).now)).toBe(
      'flush chain ip kube-proxy c\nadd rule ip kube-proxy c drop comment "why"\n',
    );
  });

  it('affinity members are never touched; a new timeout is set in place', () => {
    const live = table(base, true);
    live.sets.find((s) => s.set.name === 'aff')!.elements.push({ set: 'aff', key: [{ t: 'ip', ip: ip('9.9.9.9') }] });
    expect(diffTables([table(base)], [live]).now).toEqual([]);
    expect(diff({ ...base, sets: { ...base.sets, aff: { timeout: 600 } } }, base).now).toEqual([
      'add set aff { type ipv4_addr ; flags dynamic,timeout ; timeout 600s ; }',
    ]);
  });

  it('a set whose definition changed: referrers flushed, set recreated and refilled, referrers refilled', () => {
    const withRef: Spec = { ...base, chains: { ...base.chains, chk: [[eq(payload('ip', 'daddr'), setref('ips')), drop]] } };
    const next: Spec = { ...withRef, sets: { ...withRef.sets, ips: { elements: ['10.0.0.1'], interval: true, comment: 'new' } } };
    expect(diff(next, withRef).now).toEqual([
      'flush chain chk',
      'delete set ips',
      'add set ips { type ipv4_addr ; flags interval ; comment "new" ; }',
      'add element ips { 10.0.0.1 }',
      'add rule chk ip daddr @ips drop',
    ]);
  });

  it('a set whose comment alone differs is kept: nft drops set comments loaded from JSON', () => {
    const commented: Spec = { ...base, sets: { ...base.sets, ips: { elements: ['10.0.0.1'], comment: 'Active ClusterIPs' } } };
    expect(diff(commented, base)).toEqual({ now: [], later: [] });
    expect(diff(base, commented)).toEqual({ now: [], later: [] });
    const other: Spec = { ...base, sets: { ...base.sets, ips: { elements: ['10.0.0.1', '10.0.0.2'], comment: 'other' } } };
    expect(diff(other, commented).now).toEqual(['add element ips { 10.0.0.2 }']);
  });

  it('a stale set is deleted after the chains that used it are flushed, before they are deleted', () => {
    const withRef: Spec = { ...base, chains: { ...base.chains, chk: [[eq(payload('ip', 'daddr'), setref('ips')), drop]] } };
    const next: Spec = { ...base, sets: { aff: { timeout: 300 } } };
    expect(diff(next, withRef).now).toEqual(['flush chain chk', 'delete set ips', 'delete chain chk']);
  });

  it('a stale verdict map goes before the stale chains its elements name (nft: "Device or resource busy")', () => {
    // fast-load's draw map of a Service removed: its elements goto the Service's endpoint chains.
    const next: Spec = { base: base.base, chains: { pre: [[drop]] }, sets: base.sets };
    const { now, later } = diff(next, base);
    expect(now.indexOf('delete map vm')).toBeGreaterThan(now.indexOf('flush chain svc'));
    expect(now.indexOf('delete map vm')).toBeLessThan(now.indexOf('delete chain svc'));
    expect(now.indexOf('delete map vm')).toBeLessThan(now.indexOf('delete chain ep1'));
    expect(later).toEqual([]);
    // With two phases the chains go in the second transaction, the map in the first.
    const two = diff(next, base, true);
    expect(two.now).toContain('delete map vm');
    expect(two.later).toEqual(expect.arrayContaining(['delete chain svc', 'delete chain ep1']));
  });

  it('base chains: a new policy in place; a new priority by delete and recreate', () => {
    const policy: Spec = { ...base, base: { pre: { ...NAT, policy: 'drop' } } };
    expect(diff(policy, base).now).toEqual(['add chain pre { type nat hook prerouting priority -100 ; policy drop ; }']);
    expect(diff(base, policy).now).toEqual(['add chain pre { type nat hook prerouting priority -100 ; policy accept ; }']);
    const prio: Spec = { ...base, base: { pre: { ...NAT, priority: -90 } } };
    expect(diff(prio, base).now).toEqual([
      'flush chain pre',
      'delete chain pre',
      'add chain pre { type nat hook prerouting priority -90 ; }',
      'add rule pre jump svc',
    ]);
  });

  it('a regular chain that must become a base chain is replaced after its references are gone', () => {
    const live: Spec = { chains: { x: [[jump('pre')]], pre: [[drop]] } };
    const desired: Spec = { base: { pre: NAT }, chains: { pre: [[drop]] } };
    expect(diff(desired, live)).toEqual({
      now: ['flush chain pre', 'flush chain x', 'delete chain pre', 'delete chain x', 'add chain pre { type nat hook prerouting priority -100 ; }', 'add rule pre drop'],
      later: [],
    });
  });
});
