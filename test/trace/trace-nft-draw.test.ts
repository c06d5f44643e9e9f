// The fast-load layout's rule forms in the nftables evaluator: a random draw
// (`numgen random mod K 0 <verdict>`) forks into the branch where it matched and the one
// where the chain goes on, so that N such rules yield each of their N targets once; a
// firewall chain entered by goto, whose `return` resumes the base chain; and session
// affinity in kube-proxy's per-endpoint sets and in one table-wide set keyed by constants,
// for a new client and for one that already has affinity.
import { describe, expect, it } from 'vitest';
import { uniformChoice } from '../../src/backends/nftables/fast-load/selection.js';
import { InternalError } from '../../src/diag/diagnostic.js';
import { parseCIDR, parseIP, type IP } from '../../src/net/ip.js';
import type { Expr, Stmt } from '../../src/nft/expr.js';
import type { BaseChainSpec } from '../../src/nft/objects.js';
import { statementsBuilder, type TableContents } from '../../src/nft/ruleset.js';
import { compileProgram } from '../../src/trace/nft/program.js';
import type { PacketState } from '../../src/trace/nft/state.js';
import { seedAffinity } from '../../src/trace/nft/affinity.js';
import { compileStmt } from '../../src/trace/nft/stmts.js';
import { compileExpr, datumText } from '../../src/trace/nft/values.js';
import { walk } from '../../src/trace/nft/walk.js';
import type { Branch } from '../../src/trace/result.js';

const ip = (s: string): IP => parseIP(s)!;
const env = { localAddresses: [ip('192.168.0.2')] };
const NAT: BaseChainSpec = { type: 'nat', hook: 'prerouting', priority: -100 };
const FILTER: BaseChainSpec = { type: 'filter', hook: 'prerouting', priority: -110 };
const saddr: Expr = { t: 'payload', proto: 'ip', field: 'saddr' };
const draw = (mod: number, n = 0): Stmt => ({ t: 'match', left: { t: 'numgen', mod }, op: '==', right: { t: 'num', n } });
const setMark = (value: number): Stmt => ({ t: 'mark-set', op: 'or', value });
const dnat = (addr: string): Stmt => ({ t: 'dnat', ip: ip(addr), port: 8080 });

function state(src = '10.0.0.2'): PacketState {
  return { protocol: 'tcp', saddr: ip(src), daddr: ip('172.30.0.41'), sport: 40000, dport: 80, original: { daddr: ip('172.30.0.41'), dport: 80 }, iif: 'eth0', mark: 0, hook: 'prerouting', masqueraded: false, added: new Map(), path: [] };
}

function table(chains: Record<string, BaseChainSpec | null>, rules: [string, Stmt[]][]): TableContents {
  const b = statementsBuilder({ family: 'ip', name: 't' });
  for (const [name, spec] of Object.entries(chains)) b.chain(spec ? { name, base: spec } : { name });
  for (const [chain, stmts] of rules) b.rule({ chain, stmts });
  return b.finish();
}

const trace = (t: TableContents, src?: string): Branch[] => walk(compileProgram(t), env, state(src), false);

/** A Service chain choosing among n endpoint chains with the fast-load rules, each endpoint chain a DNAT. */
function choiceTable(n: number): TableContents {
  const eps = Array.from({ length: n }, (_, i) => `e${i}`);
  const chains: Record<string, BaseChainSpec | null> = { nat: NAT };
  for (const e of eps) chains[e] = null;
  const rules: [string, Stmt[]][] = uniformChoice(eps).map((stmts) => ['nat', stmts]);
  eps.forEach((e, i) => rules.push([e, [dnat(`10.180.0.${i + 1}`)]]));
  return table(chains, rules);
}

describe('numgen random mod K 0 <verdict>', () => {
  it('N rules yield each endpoint once, in order, for N = 1..12', () => {
    for (let n = 1; n <= 12; n++) {
      const bs = trace(choiceTable(n));
      expect(bs.map((b) => b.endpoint)).toEqual(Array.from({ length: n }, (_, i) => `10.180.0.${i + 1}:8080`));
      for (const b of bs) expect(b.verdict).toBe('dnat');
    }
  });

  it('the matched draw takes the verdict, the others go on with the next rule; branches do not share effects', () => {
    const t = table({ nat: NAT, a: null, b: null }, [
      ['nat', [setMark(0x1)]],
      ['nat', [draw(2), setMark(0x10), { t: 'verdict', v: { kind: 'goto', target: 'a' } }]],
      ['nat', [setMark(0x2)]],
      ['nat', [{ t: 'verdict', v: { kind: 'goto', target: 'b' } }]],
      ['a', [dnat('10.180.0.1')]],
      ['b', [dnat('10.180.0.2')]],
    ]);
    const [taken, passed] = trace(t);
    expect(taken.endpoint).toBe('10.180.0.1:8080');
    expect(passed.endpoint).toBe('10.180.0.2:8080');
    const marks = (b: Branch) => b.path.filter((p) => p.action.includes('mark set')).map((p) => p.action.replace(/.*: mark is /, ''));
    expect(marks(taken)).toEqual(['0x00000001', '0x00000011']);
    expect(marks(passed)).toEqual(['0x00000001', '0x00000003']);
    const step = taken.path.find((p) => p.chain === 'nat' && p.action.startsWith('numgen'))!;
    expect(step.rule).toBe('numgen random mod 2 0 mark set mark or 0x00000010 goto a');
    expect(passed.path.some((p) => p.action.startsWith('numgen'))).toBe(false);
  });

  it('a matched draw without a verdict carries on with the next rule too', () => {
    const t = table({ nat: NAT }, [
      ['nat', [draw(3), setMark(0x4000)]],
      ['nat', [dnat('10.180.0.9')]],
    ]);
    const bs = trace(t);
    expect(bs.map((b) => [b.endpoint, b.path.some((p) => p.action.includes('mark is 0x00004000'))])).toEqual([
      ['10.180.0.9:8080', true],
      ['10.180.0.9:8080', false],
    ]);
  });

  it('two draws in one rule give three branches', () => {
    const t = table({ nat: NAT, a: null }, [
      ['nat', [draw(2), draw(3), { t: 'verdict', v: { kind: 'goto', target: 'a' } }]],
      ['nat', [dnat('10.180.0.2')]],
      ['a', [dnat('10.180.0.1')]],
    ]);
    expect(trace(t).map((b) => b.endpoint)).toEqual(['10.180.0.1:8080', '10.180.0.2:8080', '10.180.0.2:8080']);
  });

  it('refuses a draw it cannot follow without picking', () => {
    const none = { element: () => undefined, has: () => false };
    expect(() => compileStmt({ t: 'match', left: { t: 'numgen', mod: 2 }, op: '!=', right: { t: 'num', n: 0 } }, none)).toThrow(InternalError);
    expect(() => compileStmt(draw(2, 2), none)).toThrow(InternalError);
    expect(() => compileStmt({ t: 'match', left: { t: 'numgen', mod: 2 }, op: '==', right: { t: 'ip', ip: ip('10.0.0.1') } }, none)).toThrow(InternalError);
    expect(() => compileStmt(draw(4, 3), none)).not.toThrow();
  });
});

describe('a firewall chain of `ip saddr R return` rules, entered by goto', () => {
  // firewall-check's vmap sends the load-balancer IP to the firewall chain with goto: its
  // return resumes the base chain after the rule that jumped to firewall-check.
  const fw = (ranges: string[]): TableContents =>
    table({ pre: FILTER, check: null, fw: null }, [
      ['pre', [{ t: 'verdict', v: { kind: 'jump', target: 'check' } }]],
      ['pre', [setMark(0x8)]],
      ['check', [{ t: 'verdict', v: { kind: 'goto', target: 'fw' } }]],
      ['check', [setMark(0x1)]],
      ...ranges.map((r): [string, Stmt[]] => ['fw', [{ t: 'match', left: saddr, op: '==', right: { t: 'prefix', cidr: parseCIDR(r)!.cidr } }, { t: 'verdict', v: { kind: 'return' } }]]),
      ['fw', [{ t: 'verdict', v: { kind: 'drop' } }]],
    ]);
  it('an allowed source returns to the base chain and goes on; a refused one is dropped', () => {
    const t = fw(['203.0.113.0/25', '198.51.100.0/24']);
    for (const src of ['203.0.113.7', '198.51.100.200']) {
      const [b] = trace(t, src);
      expect(b.verdict, src).toBe('none');
      // Back in pre after its jump (mark 0x8), not in check (the goto does not come back).
      expect(b.path.filter((p) => p.action.startsWith('mark set')).map((p) => p.chain)).toEqual(['pre']);
    }
    for (const src of ['203.0.113.200', '10.0.0.2']) expect(trace(t, src)[0].verdict, src).toBe('drop');
  });
});

describe('session affinity in either form, with a client that already has it', () => {
  // kube-proxy's form: a set per endpoint, keyed by the client. The table-wide form: one
  // set keyed by the client and two constants standing for the endpoint (numgen random
  // mod 1 offset C is C).
  const concatKey = (c1: number, c2: number): Expr => ({ t: 'concat', parts: [saddr, { t: 'numgen', mod: 1, offset: c1 }, { t: 'numgen', mod: 1, offset: c2 }] });
  const eps = [
    { chain: 'e1', ip: '10.180.0.1', set: 'affinity-e1', c: [1035105866, 1697898561] },
    { chain: 'e2', ip: '10.180.0.2', set: 'affinity-e2', c: [657763205, 2110844867] },
  ];
  function affinityTable(form: 'per-endpoint' | 'table-wide'): TableContents {
    const b = statementsBuilder({ family: 'ip', name: 't' });
    b.chain({ name: 'nat', base: NAT });
    for (const e of eps) b.chain({ name: e.chain });
    const key = (e: (typeof eps)[number]) => (form === 'per-endpoint' ? saddr : concatKey(e.c[0], e.c[1]));
    const set = (e: (typeof eps)[number]) => (form === 'per-endpoint' ? e.set : 'affinity');
    if (form === 'per-endpoint') for (const e of eps) b.set({ name: e.set, kind: 'set', keyType: ['ipv4_addr'], flags: ['dynamic', 'timeout'], timeoutSeconds: 300 });
    else b.set({ name: 'affinity', kind: 'set', keyType: ['ipv4_addr', 'integer', 'integer'], typeof: concatKey(0, 0), size: 131070, flags: ['dynamic', 'timeout'], timeoutSeconds: 10800 });
    for (const e of eps) b.rule({ chain: 'nat', stmts: [{ t: 'match', left: key(e), op: '==', right: { t: 'setref', name: set(e) } }, { t: 'verdict', v: { kind: 'goto', target: e.chain } }] });
    const choice: [string, Stmt[]][] =
      form === 'per-endpoint'
        ? [['nat', [{ t: 'numgen-vmap', mod: 2, targets: eps.map((e) => ({ kind: 'goto' as const, target: e.chain })) }]]]
        : uniformChoice(eps.map((e) => e.chain)).map((stmts) => ['nat', stmts]);
    for (const [chain, stmts] of choice) b.rule({ chain, stmts });
    for (const e of eps) {
      b.rule({ chain: e.chain, stmts: [{ t: 'update', set: set(e), key: key(e), ...(form === 'table-wide' ? { timeoutSeconds: 300 } : {}) }] });
      b.rule({ chain: e.chain, stmts: [dnat(e.ip)] });
    }
    return b.finish();
  }

  it('numgen random mod 1 offset C is the constant C, alone and in a concatenation', () => {
    const s = state('10.0.0.7');
    expect(compileExprValue({ t: 'numgen', mod: 1, offset: 42 }, s)).toBe('42');
    expect(compileExprValue({ t: 'numgen', mod: 1 }, s)).toBe('0');
    expect(compileExprValue(concatKey(7, 9), s)).toBe('10.0.0.7 . 7 . 9');
  });

  for (const form of ['per-endpoint', 'table-wide'] as const) {
    it(`${form}: a new client reaches every endpoint, each writing its own key; one with affinity to e2 reaches e2 only`, () => {
      const p = compileProgram(affinityTable(form));
      const fresh = walk(p, env, state('10.0.0.7'), false);
      expect(fresh.map((b) => b.endpoint)).toEqual(['10.180.0.1:8080', '10.180.0.2:8080']);
      const want = (e: (typeof eps)[number]) => (form === 'per-endpoint' ? { set: e.set, key: '10.0.0.7' } : { set: 'affinity', key: `10.0.0.7 . ${e.c[0]} . ${e.c[1]}` });
      expect(fresh.map((b) => b.affinity)).toEqual([[want(eps[0])], [want(eps[1])]]);

      const packet = { protocol: 'tcp' as const, src: ip('10.0.0.7'), dst: ip('172.30.0.41'), sport: 40000, dport: 80, affinity: { ip: ip('10.180.0.2'), port: 8080 } };
      const s = state('10.0.0.7');
      expect(seedAffinity(p, env, packet, s)).toContain('session affinity to 10.180.0.2:8080');
      const sticky = walk(p, env, s, false);
      expect(sticky.map((b) => b.endpoint)).toEqual(['10.180.0.2:8080']);
      // The hit path refreshes the element: the endpoint chain's update runs again.
      expect(sticky[0].affinity).toEqual([want(eps[1])]);
      // Another client has no affinity.
      const other = state('10.0.0.8');
      seedAffinity(p, env, { ...packet, src: ip('10.0.0.8') }, other);
      const s2 = state('10.0.0.9');
      s2.before = other.before;
      expect(walk(p, env, s2, false)).toHaveLength(2);
    });
  }

  it('refuses affinity to an address no rule or endpoint chain DNATs to', () => {
    const p = compileProgram(affinityTable('table-wide'));
    const packet = { protocol: 'tcp' as const, src: ip('10.0.0.7'), dst: ip('172.30.0.41'), sport: 40000, dport: 80, affinity: { ip: ip('10.180.0.3'), port: 8080 } };
    expect(() => seedAffinity(p, env, packet, state())).toThrow(/no rule or endpoint chain/);
  });
});

function compileExprValue(e: Expr, s: PacketState): string {
  return datumText(compileExpr(e)(s, env)!);
}

describe('the DNAT chains shared by Service ports: a map keyed by the destination and a draw', () => {
  const daddr: Expr = { t: 'payload', proto: 'ip', field: 'daddr' };
  const dport: Expr = { t: 'payload', proto: 'tcp', field: 'dport' };
  const key = (n: number): Expr => ({ t: 'concat', parts: [daddr, dport, { t: 'numgen', mod: n }] });

  /** The shared chain of 3 endpoints and its map, holding `elements` draws of 172.30.0.41:80. */
  function sharedTable(elements: number): TableContents {
    const b = statementsBuilder({ family: 'ip', name: 't' });
    b.set({
      name: 'service-endpoints-tcp',
      kind: 'map',
      keyType: ['ipv4_addr', 'inet_service', 'integer'],
      typeof: key(1),
      data: { types: ['ipv4_addr', 'inet_service'], typeof: { t: 'concat', parts: [daddr, dport] } },
    });
    b.chain({ name: 'nat', base: NAT });
    b.rule({ chain: 'nat', stmts: [{ t: 'map-dnat', family: 'ip', key: key(3), map: 'service-endpoints-tcp' }] });
    for (let i = 0; i < elements; i++) {
      b.element({ set: 'service-endpoints-tcp', key: [{ t: 'ip', ip: ip('172.30.0.41') }, { t: 'port', n: 80 }, { t: 'int', n: i }], data: [{ t: 'ip', ip: ip(`10.180.0.${i + 1}`) }, { t: 'port', n: 8080 + i }] });
    }
    return b.finish();
  }
  const run = (t: TableContents, change: Partial<PacketState> = {}): Branch[] => walk(compileProgram(t), env, { ...state(), ...change }, false);

  it('forks into one branch per draw, each DNATed to the element of the packet\'s destination, in order', () => {
    const bs = run(sharedTable(3));
    expect(bs.map((b) => [b.verdict, b.endpoint])).toEqual([
      ['dnat', '10.180.0.1:8080'],
      ['dnat', '10.180.0.2:8081'],
      ['dnat', '10.180.0.3:8082'],
    ]);
  });

  it('DNATs nothing for a destination without elements, or when a draw lacks its element', () => {
    for (const bs of [run(sharedTable(3), { dport: 81 }), run(sharedTable(3), { daddr: ip('172.30.0.42') }), run(sharedTable(2))]) {
      expect(bs.map((b) => b.verdict)).toEqual(['none']);
    }
  });

  it('DNATs nothing for another protocol: the key reads tcp dport', () => {
    expect(run(sharedTable(3), { protocol: 'udp' }).map((b) => b.verdict)).toEqual(['none']);
  });
});
