// The nftables evaluator, rule form by rule form, on small hand-built tables; and the guard
// that keeps it honest: every statement, expression and value kind of nft/expr.ts has an
// evaluator, and every rule the compiler emits for any fixture compiles and evaluates.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { InternalError } from '../../src/diag/diagnostic.js';
import { parseCIDR, parseIP, type IP } from '../../src/net/ip.js';
import type { Expr, Stmt, Value } from '../../src/nft/expr.js';
import { StatementStore, statementsBuilder, type TableBuilder, type TableContents } from '../../src/nft/ruleset.js';
import { ruleStmts, type BaseChainSpec, type Hook } from '../../src/nft/objects.js';
import { compileProgram } from '../../src/trace/nft/program.js';
import type { PacketState } from '../../src/trace/nft/state.js';
import { compileStmt, TRACED_STMT_KINDS } from '../../src/trace/nft/stmts.js';
import { compileExpr, TRACED_EXPR_KINDS, TRACED_VALUE_KINDS } from '../../src/trace/nft/values.js';
import { walk } from '../../src/trace/nft/walk.js';
import type { L4Protocol } from '../../src/trace/packet.js';
import { summarize, type Branch } from '../../src/trace/result.js';
import { dnatMapTables } from '../helpers/dnat-map-table.js';
import { listFixtures } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/kproxc.js';
import { parseArgsToOptions } from '../helpers/options.js';

const ip = (s: string): IP => parseIP(s)!;
const cidr = (s: string) => parseCIDR(s)!.cidr;
const NODE = ip('192.168.0.2');
const env = { localAddresses: [NODE] };

function state(p: { src: string; dst: string; dport?: number; protocol?: L4Protocol; iif?: string; hook?: Hook }): PacketState {
  return {
    protocol: p.protocol ?? 'tcp',
    saddr: ip(p.src),
    daddr: ip(p.dst),
    sport: 40000,
    dport: p.dport ?? 80,
    original: { daddr: ip(p.dst), dport: p.dport ?? 80 },
    iif: p.iif ?? 'eth0',
    mark: 0,
    hook: p.hook ?? 'prerouting',
    masqueraded: false,
    added: new Map(),
    path: [],
  };
}

const base = (hook: Hook, type: 'filter' | 'nat', priority: number): BaseChainSpec => ({ type, hook, priority });

/** A table with the given chains (base chains by spec) and rules; sets may be declared too. */
function table(
  chains: Record<string, BaseChainSpec | null>,
  rules: [string, Stmt[]][],
  setup?: (b: TableBuilder) => void,
): TableContents {
  const b = statementsBuilder({ family: 'ip', name: 't' });
  for (const [name, spec] of Object.entries(chains)) b.chain(spec ? { name, base: spec } : { name });
  setup?.(b);
  for (const [chain, stmts] of rules) b.rule({ chain, stmts });
  return b.finish();
}

function trace(t: TableContents, s: PacketState, sentByNode = false): Branch[] {
  return walk(compileProgram(t), env, s, sentByNode);
}

const saddr: Expr = { t: 'payload', proto: 'ip', field: 'saddr' };
const daddr: Expr = { t: 'payload', proto: 'ip', field: 'daddr' };
const mark: Expr = { t: 'meta', key: 'mark' };
const setMark = (value: number): Stmt => ({ t: 'mark-set', op: 'or', value });
const match = (left: Expr, right: Value, op: '==' | '!=' = '=='): Stmt => ({ t: 'match', left, op, right });
const drop: Stmt = { t: 'verdict', v: { kind: 'drop' } };
const PRE = { pre: base('prerouting', 'filter', 0) };

/** Whether a one-rule prerouting chain `stmts drop` drops the packet. */
function matches(stmts: Stmt[], s: PacketState, setup?: (b: TableBuilder) => void): boolean {
  return trace(table(PRE, [['pre', [...stmts, drop]]], setup), s)[0].verdict === 'drop';
}

describe('expr.ts kinds', () => {
  const source = fs.readFileSync(path.join(ROOT, 'src/nft/expr.ts'), 'utf8');
  const kindsOf = (type: string) => {
    const m = new RegExp(`export type ${type} =([\\s\\S]*?);\\n\\n`).exec(source);
    if (!m) throw new Error(`type ${type} not found in expr.ts`);
    return [...m[1].matchAll(/\{ t: '([a-z-]+)'/g)].map((x) => x[1]).sort();
  };

  it('every statement kind has an evaluator', () => {
    expect(kindsOf('Stmt').length).toBeGreaterThan(5);
    expect([...TRACED_STMT_KINDS].sort()).toEqual(kindsOf('Stmt'));
  });
  it('every expression kind has an evaluator', () => {
    expect([...TRACED_EXPR_KINDS].sort()).toEqual(kindsOf('Expr'));
  });
  it('every value kind has an evaluator', () => {
    expect([...TRACED_VALUE_KINDS].sort()).toEqual(kindsOf('Value'));
  });
  it('refuses what it cannot evaluate', () => {
    const fakeSets = { element: () => undefined, has: () => false };
    expect(() => compileStmt({ t: 'queue' } as unknown as Stmt, fakeSets)).toThrow(InternalError);
    expect(() => compileExpr({ t: 'osf' } as unknown as Expr)).toThrow(InternalError);
    expect(() => compileStmt(match({ t: 'meta', key: 'mark' }, { t: 'quoted' } as unknown as Value), fakeSets)).toThrow(InternalError);
    // A random number outside a verdict map would force the trace to pick one branch.
    expect(() => compileExpr({ t: 'numgen', mod: 2 })).toThrow(/numgen/);
  });
});

describe('every rule the compiler emits, in either layout', () => {
  const cases = [
    ...listFixtures(),
    ...listFixtures(path.join(ROOT, 'test/trace/kube-proxy')),
  ];
  it('has fixtures', () => expect(cases.length).toBeGreaterThan(30));

  const seen = new Set<string>();
  const evaluateEvery = (t: TableContents) => {
    // Every rule compiles (an unknown form throws here, whether or not a packet reaches it).
    compileProgram(t);
    const index = { element: () => undefined, has: () => false };
    const src = t.table.family === 'ip' ? '10.0.0.2' : 'fd00:10::2';
    const dst = t.table.family === 'ip' ? '172.30.0.41' : 'fd00:172:30::41';
    for (const c of t.chains) {
      for (const r of c.rules) {
        for (const st of ruleStmts(r)) {
          seen.add(st.t);
          // And every statement evaluates on a packet of its family.
          expect(() => compileStmt(st, index)(state({ src, dst }), env), `${c.chain.name}: ${JSON.stringify(st)}`).not.toThrow();
        }
      }
    }
  };
  for (const f of cases) {
    it(`${path.relative(ROOT, f.file)}`, () => {
      const model = loadModel([{ name: f.file, text: f.text }], parseArgsToOptions(f.args));
      for (const t of TABLE_KINDS.flatMap((k) => compileTables(model, { tableName: 'kube-proxy', layout: k.layout, version: k.version }, [], StatementStore))) evaluateEvery(t);
    });
  }
  // kube-proxy 1.36's forms as the library writes them, whether or not a layout emits them yet.
  it('test/helpers/dnat-map-table.ts', () => dnatMapTables().forEach(evaluateEvery));
  it('the fixtures and the table of new forms use every statement kind', () => {
    expect([...seen].sort()).toEqual([...TRACED_STMT_KINDS].sort());
  });
});

describe('matches', () => {
  const s = () => state({ src: '10.0.0.2', dst: '172.30.0.41' });
  it('addresses, prefixes and anonymous sets, equal and not', () => {
    expect(matches([match(saddr, { t: 'ip', ip: ip('10.0.0.2') })], s())).toBe(true);
    expect(matches([match(saddr, { t: 'ip', ip: ip('10.0.0.3') })], s())).toBe(false);
    expect(matches([match(saddr, { t: 'ip', ip: ip('10.0.0.3') }, '!=')], s())).toBe(true);
    expect(matches([match(saddr, { t: 'prefix', cidr: cidr('10.0.0.0/8') })], s())).toBe(true);
    expect(matches([match(saddr, { t: 'prefix', cidr: cidr('10.0.0.0/8') }, '!=')], s())).toBe(false);
    const ranges: Value = { t: 'anonset', items: [{ t: 'prefix', cidr: cidr('203.0.113.0/25') }, { t: 'ip', ip: ip('1.2.3.4') }] };
    expect(matches([match(saddr, ranges, '!=')], s())).toBe(true);
    expect(matches([match(saddr, ranges, '!=')], state({ src: '1.2.3.4', dst: '5.6.7.8' }))).toBe(false);
    expect(matches([match(saddr, ranges)], state({ src: '203.0.113.2', dst: '5.6.7.8' }))).toBe(true);
  });
  it('an ip6 expression never matches an IPv4 packet', () => {
    expect(matches([match({ t: 'payload', proto: 'ip6', field: 'saddr' }, { t: 'prefix', cidr: cidr('::/0') }, '!=')], s())).toBe(false);
  });
  it('ports and protocols: `tcp dport` needs TCP, `th dport` reads any', () => {
    const tcpDport: Expr = { t: 'payload', proto: 'tcp', field: 'dport' };
    expect(matches([match(tcpDport, { t: 'num', n: 80 })], s())).toBe(true);
    expect(matches([match(tcpDport, { t: 'num', n: 80 })], state({ src: '10.0.0.2', dst: '172.30.0.41', protocol: 'udp' }))).toBe(false);
    expect(matches([match(tcpDport, { t: 'num', n: 81 }, '!=')], state({ src: '10.0.0.2', dst: '172.30.0.41', protocol: 'udp' }))).toBe(false);
    expect(matches([match({ t: 'payload', proto: 'th', field: 'dport' }, { t: 'num', n: 53 })], state({ src: '10.0.0.2', dst: '1.1.1.1', dport: 53, protocol: 'sctp' }))).toBe(true);
    expect(matches([match({ t: 'meta', key: 'l4proto' }, { t: 'sym', s: 'udp' })], s())).toBe(false);
    expect(matches([match({ t: 'meta', key: 'l4proto' }, { t: 'sym', s: 'tcp' })], s())).toBe(true);
  });
  it('interface names, with a trailing wildcard', () => {
    const iif: Expr = { t: 'meta', key: 'iifname' };
    expect(matches([match(iif, { t: 'str', s: 'veth*' })], state({ src: '10.0.0.2', dst: '1.1.1.1', iif: 'veth12' }))).toBe(true);
    expect(matches([match(iif, { t: 'str', s: 'veth*' })], state({ src: '10.0.0.2', dst: '1.1.1.1', iif: 'eth0' }))).toBe(false);
    expect(matches([match(iif, { t: 'str', s: 'cbr0' }, '!=')], state({ src: '10.0.0.2', dst: '1.1.1.1', iif: 'cbr0' }))).toBe(false);
    expect(matches([match(iif, { t: 'str', s: 'cbr0' })], state({ src: '10.0.0.2', dst: '1.1.1.1', iif: 'cbr0' }))).toBe(true);
  });
  it('ct state new: every traced packet opens a connection', () => {
    expect(matches([match({ t: 'ct', key: 'state' }, { t: 'sym', s: 'new' })], s())).toBe(true);
  });
  it('fib saddr/daddr type local: the node addresses and loopback', () => {
    const fib = (flag: 'saddr' | 'daddr'): Expr => ({ t: 'fib', flag, result: 'type' });
    const local: Value = { t: 'sym', s: 'local' };
    expect(matches([match(fib('saddr'), local)], state({ src: '192.168.0.2', dst: '1.1.1.1' }))).toBe(true);
    expect(matches([match(fib('saddr'), local)], s())).toBe(false);
    expect(matches([match(fib('daddr'), local)], state({ src: '10.0.0.2', dst: '192.168.0.2' }))).toBe(true);
    expect(matches([match(fib('daddr'), local)], state({ src: '10.0.0.2', dst: '127.0.0.1' }))).toBe(true);
  });
  it('marks: `mark and X == 0`', () => {
    const masked: Expr = { t: 'and', left: mark, mask: 0x4000 };
    expect(matches([match(masked, { t: 'num', n: 0 })], s())).toBe(true);
    expect(matches([setMark(0x4001), match(masked, { t: 'num', n: 0 })], s())).toBe(false);
    expect(matches([setMark(0x4000), { t: 'mark-set', op: 'xor', value: 0x4000 }, match(masked, { t: 'num', n: 0 })], s())).toBe(true);
  });
  it('named sets, with concatenated keys', () => {
    const key: Expr = { t: 'concat', parts: [daddr, { t: 'meta', key: 'l4proto' }, { t: 'payload', proto: 'th', field: 'dport' }] };
    const setup = (b: TableBuilder) => {
      b.set({ name: 'svc', kind: 'set', keyType: ['ipv4_addr', 'inet_proto', 'inet_service'] });
      b.element({ set: 'svc', key: [{ t: 'ip', ip: ip('172.30.0.41') }, { t: 'proto', name: 'tcp' }, { t: 'port', n: 80 }] });
    };
    expect(matches([match(key, { t: 'setref', name: 'svc' })], s(), setup)).toBe(true);
    expect(matches([match(key, { t: 'setref', name: 'svc' })], state({ src: '10.0.0.2', dst: '172.30.0.41', protocol: 'udp' }), setup)).toBe(false);
    expect(matches([match(key, { t: 'setref', name: 'svc' }, '!=')], state({ src: '10.0.0.2', dst: '172.30.0.41', dport: 81 }), setup)).toBe(true);
  });
});

describe('verdicts and chains', () => {
  const s = () => state({ src: '10.0.0.2', dst: '172.30.0.41' });
  it('jump comes back after the rule; goto does not; return goes back to the caller', () => {
    const t = table(
      { pre: base('prerouting', 'filter', 0), a: null, b: null, c: null },
      [
        ['pre', [{ t: 'verdict', v: { kind: 'jump', target: 'a' } }]],
        ['pre', [setMark(0x1)]],
        ['a', [{ t: 'verdict', v: { kind: 'goto', target: 'b' } }]],
        ['a', [setMark(0x2)]], // skipped: the goto does not come back to a
        ['b', [{ t: 'verdict', v: { kind: 'jump', target: 'c' } }]],
        ['b', [setMark(0x4)]],
        ['c', [{ t: 'verdict', v: { kind: 'return' } }]],
        ['c', [setMark(0x8)]], // skipped: after return
      ],
    );
    const [b] = trace(t, s());
    const marks = b.path.filter((p) => p.action.startsWith('mark set')).map((p) => p.chain);
    expect(marks).toEqual(['b', 'pre']);
    expect(b.verdict).toBe('none');
  });
  it('drop and reject end the packet; accept ends only its base chain', () => {
    const chains = { first: base('prerouting', 'filter', -10), second: base('prerouting', 'filter', 10) };
    expect(trace(table(chains, [['first', [drop]], ['second', [setMark(1)]]]), s())[0].verdict).toBe('drop');
    expect(trace(table(chains, [['first', [{ t: 'reject' }]]]), s())[0].verdict).toBe('reject');
    const [b] = trace(table(chains, [['first', [{ t: 'verdict', v: { kind: 'accept' } }]], ['second', [drop]]]), s());
    expect(b.verdict).toBe('drop');
    expect(b.path.map((p) => p.chain)).toEqual(['first', 'second']);
  });
  it('base chains run by priority, whatever their names', () => {
    const chains = { zz: base('prerouting', 'filter', -110), aa: base('prerouting', 'nat', -100) };
    const [b] = trace(table(chains, [['aa', [setMark(1)]], ['zz', [setMark(2)]]]), s());
    expect(b.path.map((p) => p.chain ?? p.hook)).toEqual(['zz', 'aa', 'routing']);
  });
  it('a verdict map sends the packet where its element says, and a miss goes on', () => {
    const setup = (b: TableBuilder) => {
      b.set({ name: 'm', kind: 'map', keyType: ['ipv4_addr'] });
      b.element({ set: 'm', key: [{ t: 'ip', ip: ip('172.30.0.41') }], value: { kind: 'drop' } });
    };
    const rules: [string, Stmt[]][] = [['pre', [{ t: 'vmap', key: daddr, map: 'm' }]], ['pre', [setMark(1)]]];
    const hit = trace(table(PRE, rules, setup), s())[0];
    expect(hit.verdict).toBe('drop');
    expect(hit.path[0].action).toBe('matched m element 172.30.0.41 → drop');
    const miss = trace(table(PRE, rules, setup), state({ src: '10.0.0.2', dst: '172.30.0.42' }))[0];
    expect(miss.verdict).toBe('none');
    expect(miss.path.map((p) => p.action)).toEqual([
      'm has no element 172.30.0.42',
      'mark set mark or 0x00000001: mark is 0x00000001',
      '172.30.0.42 is not a local address: forward',
    ]);
  });
  it('numgen forks: every endpoint is a branch with its own path', () => {
    const t = table(
      { nat: base('prerouting', 'nat', -100), e1: null, e2: null },
      [
        ['nat', [{ t: 'numgen-vmap', mod: 2, targets: [{ kind: 'goto', target: 'e1' }, { kind: 'goto', target: 'e2' }] }]],
        ['e1', [match(saddr, { t: 'ip', ip: ip('10.180.0.1') }), setMark(0x4000)]],
        ['e1', [{ t: 'dnat', ip: ip('10.180.0.1'), port: 8080 }]],
        ['e2', [match(saddr, { t: 'ip', ip: ip('10.0.0.2') }), setMark(0x4000)]],
        ['e2', [{ t: 'dnat', ip: ip('10.180.0.2'), port: 8080 }]],
      ],
    );
    const bs = trace(t, s());
    expect(bs.map((b) => b.endpoint)).toEqual(['10.180.0.1:8080', '10.180.0.2:8080']);
    // The mark of the second branch does not leak into the first.
    expect(bs[0].path.some((p) => p.action.includes('mark set'))).toBe(false);
    expect(bs[1].path.some((p) => p.action.includes('mark set'))).toBe(true);
    expect(summarize({ packet: null as never, origin: '', branches: bs })).toEqual({
      verdict: 'dnat',
      endpoints: ['10.180.0.1:8080', '10.180.0.2:8080'],
      masquerade: false,
    });
  });
});

describe('NAT, routing and masquerade', () => {
  const chains = {
    nat: base('prerouting', 'nat', -100),
    input: base('input', 'filter', 0),
    forward: base('forward', 'filter', 0),
    post: base('postrouting', 'nat', 100),
  };
  const masq: [string, Stmt[]][] = [
    ['post', [match({ t: 'and', left: mark, mask: 0x4000 }, { t: 'num', n: 0 }), { t: 'verdict', v: { kind: 'return' } }]],
    ['post', [{ t: 'masquerade', fullyRandom: true }]],
  ];
  it('DNAT changes the destination before routing: forward, then postrouting', () => {
    const t = table(chains, [['nat', [{ t: 'dnat', ip: ip('10.180.0.1'), port: 80 }]], ['forward', [setMark(0x4000)]], ...masq]);
    const [b] = trace(t, state({ src: '203.0.113.2', dst: '192.168.0.2' }));
    expect(b.verdict).toBe('dnat');
    expect(b.masquerade).toBe(true);
    expect(b.path.map((p) => p.hook)).toEqual(['prerouting', 'routing', 'forward', 'postrouting']);
  });
  it('a local destination goes to input, and input traffic is never masqueraded', () => {
    const t = table(chains, [['nat', [setMark(0x4000)]], ['input', [setMark(0x1)]], ...masq]);
    const [b] = trace(t, state({ src: '203.0.113.2', dst: '192.168.0.2' }));
    expect(b.path.map((p) => p.hook)).toEqual(['prerouting', 'routing', 'input']);
    expect(b.verdict).toBe('none');
    expect(b.masquerade).toBe(false);
  });
  it('DNAT to a node address (a host-network endpoint) goes to input', () => {
    const t = table(chains, [['nat', [{ t: 'dnat', ip: NODE, port: 8080 }]]]);
    const [b] = trace(t, state({ src: '203.0.113.2', dst: '172.30.0.41' }));
    expect(b.path.find((p) => p.hook === 'routing')?.action).toBe('192.168.0.2 is a local address: input');
  });
  it('a packet the node sends: output, then postrouting; to itself, back in through loopback without NAT', () => {
    const out = {
      fout: base('output', 'filter', -110),
      nout: base('output', 'nat', -100),
      post: base('postrouting', 'nat', 100),
      nat: base('prerouting', 'nat', -100),
      input: base('input', 'filter', 0),
    };
    const t = table(out, [['fout', [setMark(1)]], ['nout', [setMark(2)]], ['post', [setMark(4)]], ['nat', [drop]], ['input', [setMark(8)]]]);
    const [away] = trace(t, state({ src: '192.168.0.2', dst: '8.8.8.8', iif: '', hook: 'output' }), true);
    expect(away.path.map((p) => p.chain ?? p.hook)).toEqual(['fout', 'nout', 'routing', 'post']);
    const [self] = trace(t, state({ src: '192.168.0.2', dst: '192.168.0.2', iif: '', hook: 'output' }), true);
    expect(self.verdict).toBe('none'); // the nat prerouting drop is not consulted again
    expect(self.path.map((p) => p.chain ?? p.hook)).toEqual(['fout', 'nout', 'routing', 'post', 'nat', 'input']);
  });
  it('update @set remembers the client for the rest of the path', () => {
    const t = table(
      PRE,
      [
        ['pre', [{ t: 'update', set: 'aff', key: saddr }]],
        ['pre', [match(saddr, { t: 'setref', name: 'aff' }), drop]],
      ],
      (b) => b.set({ name: 'aff', kind: 'set', keyType: ['ipv4_addr'], flags: ['dynamic', 'timeout'], timeoutSeconds: 10800 }),
    );
    const [b] = trace(t, state({ src: '10.0.0.2', dst: '172.30.0.41' }));
    expect(b.verdict).toBe('drop');
    expect(b.path[0].action).toBe('update @aff: 10.0.0.2 is remembered (session affinity)');
  });
});
