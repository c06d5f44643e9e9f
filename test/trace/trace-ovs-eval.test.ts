// The OpenFlow walker, flow form by flow form, on small hand-built programs; and the guard
// that keeps it honest: every match-field and action kind of the ovs backend has an
// evaluator, and every flow and group the backend emits for any fixture is indexed, matched
// and run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fcFullSize } from '../helpers/fc-runs.js';
import { compileOvsProgram } from '../../src/backends/ovs/index.js';
import {
  DROP,
  IN_PORT,
  NORMAL,
  addr,
  ct,
  ctState,
  gotoTable,
  groupAction,
  proto,
  regMatch,
  resubmit,
  setCtMark,
  setField,
  tpDst,
  type Action,
  type Flow,
  type Group,
  type MatchField,
} from '../../src/ovs/openflow.js';
import { opText } from '../../src/ovs/ops.js';
import { loadModel } from '../../src/compile.js';
import { InternalError } from '../../src/diag/diagnostic.js';
import { parseIP, type IP } from '../../src/net/ip.js';
import { runActions, TRACED_ACTION_KINDS } from '../../src/trace/ovs/exec.js';
import { compileMatch, TRACED_MATCH_KINDS } from '../../src/trace/ovs/match.js';
import { indexProgram, type Program } from '../../src/trace/ovs/program.js';
import type { OvsState } from '../../src/trace/ovs/state.js';
import { walkBridge } from '../../src/trace/ovs/walk.js';
import { traceText } from '../../src/trace/format.js';
import type { L4Protocol } from '../../src/trace/packet.js';
import { summarize, type Branch } from '../../src/trace/result.js';
import { ROOT } from '../helpers/kproxc.js';
import { listFixtures } from '../helpers/fixtures.js';
import { ovsCases } from '../helpers/ovs-cases.js';
import { parseArgsToOptions } from '../helpers/options.js';
import { probesFor, type Outcome } from '../helpers/ovs-expect.js';
import { packetOf, tracerFor } from '../helpers/trace.js';
import { groupIDCandidate } from '../../src/backends/ovs/group-ids.js';

const ip = (s: string): IP => parseIP(s)!;
const COOKIE = 0x1030000000000n;

function state(p: { src?: string; dst?: string; dport?: number; protocol?: 'tcp' | 'udp' | 'sctp' } = {}): OvsState {
  return {
    pkt: { protocol: p.protocol ?? 'tcp', src: ip(p.src ?? '10.0.0.2'), dst: ip(p.dst ?? '172.30.0.41'), sport: 40000, dport: p.dport ?? 80, regs: Array<bigint>(16).fill(0n) },
    conns: new Map(),
    outputs: [],
    pending: [],
    stack: [],
    path: [],
  };
}

type Row = [table: number, priority: number, match: MatchField[], actions: Action[]];

function program(rows: Row[], groups: Group[] = []): Program {
  const flows = rows.map(([table, priority, match, actions]): Flow => ({ table, priority, cookie: COOKIE, match, actions }));
  return indexProgram({ groups, flows: flows.map((flow) => ({ flow, text: '', owner: undefined })) });
}

function walk(rows: Row[], s = state(), groups: Group[] = []): Branch[] {
  return walkBridge(program(rows, groups), s);
}

const verdicts = (bs: Branch[]) => bs.map((b) => b.verdict);
const DNAT = (to: string, port: number, table: number, zone = 1) => ct({ commit: true, table, zone, nat: { t: 'dnat', ip: ip(to), port }, exec: [setCtMark(0x10)] });

describe('openflow.ts kinds', () => {
  const source = fs.readFileSync(path.join(ROOT, 'src/ovs/openflow.ts'), 'utf8');
  const kindsOf = (...types: string[]) =>
    types
      .flatMap((type) => {
        const m = new RegExp(`export type ${type} =([\\s\\S]*?);\\n`).exec(source);
        if (!m) throw new Error(`type ${type} not found in openflow.ts`);
        return [...m[1].matchAll(/\{ t: '([a-z-]+)'/g)].map((x) => x[1]);
      })
      .sort();

  it('every match-field kind has an evaluator', () => {
    expect(kindsOf('MatchField').length).toBeGreaterThan(5);
    expect([...TRACED_MATCH_KINDS].sort()).toEqual(kindsOf('MatchField'));
  });
  it('every action kind has an evaluator', () => {
    // Action names SetField by reference; its kind is declared with it.
    expect([...TRACED_ACTION_KINDS].sort()).toEqual(kindsOf('Action', 'SetField'));
  });
  it('refuses what it cannot evaluate, when the flows are indexed', () => {
    expect(() => compileMatch({ t: 'in-port', port: 1 } as unknown as MatchField)).toThrow(InternalError);
    expect(() => program([[0, 0, [], [{ t: 'output', port: 'LOCAL' } as unknown as Action]]])).toThrow(/output to LOCAL/);
    expect(() => program([[0, 0, [], [{ t: 'meter', id: 1 } as unknown as Action]]])).toThrow(/table 0 .*cannot evaluate the action meter/);
    // In a bucket too, even of a group no flow names.
    expect(() => program([], [{ id: 1, buckets: [{ actions: [{ t: 'meter' } as unknown as Action] }] }])).toThrow(/group 1 bucket 0/);
    expect(() => program([[0, 0, [], [{ t: 'controller', reason: 'no_match', userdata: '07' }]]])).toThrow(/userdata=07/);
    expect(() => program([[5, 0, [], [gotoTable(5)]]])).toThrow(/must move forward/);
    expect(() => program([[0, 0, [], [groupAction(9)]]])).toThrow(/names no group/);
    expect(() => program([[0, 0, [], [setCtMark(0x10)]]])).toThrow(/ct_mark outside ct/);
    expect(() => program([[0, 0, [], [ct({ table: 1, zone: 1, exec: [setCtMark(0x10)] })]]])).toThrow(/without commit/);
    expect(() => program([[0, 0, [], [setField(0x1ffff, 0xffff, 'reg4')]]])).toThrow(/does not fit/);
    expect(() => program([[0, 0, [{ t: 'reg-ip', reg: 'reg3', ip: ip('fd00::1') }], [NORMAL]]])).toThrow(/does not fit reg3/);
  });
});

// ovs/large-groups walks groups of 750 buckets from every flow and probe: a quick run
// (FC_RUNS unset) leaves that size to `npm test`; the other cases use every kind as well.
const walkedCases = () => ovsCases().filter((c) => fcFullSize() || c.name !== 'ovs/large-groups');

describe('every flow the ovs backend emits', () => {
  const cases = [
    ...walkedCases(),
    ...listFixtures(path.join(ROOT, 'test/trace/kube-proxy')).map((f) => ({ ...f, name: `kube-proxy/${f.name}` })),
  ];
  const seenMatches = new Set<string>();
  const seenActions = new Set<string>();

  for (const c of cases) {
    it(c.name, () => {
      const model = loadModel([{ name: c.file, text: c.text }], parseArgsToOptions(c.args));
      const compiled = compileOvsProgram(model.families, []);
      // Every flow and bucket is checked here, whether or not a packet reaches it.
      const p = indexProgram(compiled);
      const w = { program: p, abort: () => [] };
      for (const { flow } of compiled.flows) {
        const s = state(flow.match.some((m) => m.t === 'proto' && /6$/.test(m.word)) ? { src: 'fd00:10::2', dst: 'fd00:172:30::41' } : {});
        for (const m of flow.match) {
          seenMatches.add(m.t);
          expect(() => compileMatch(m)(s.pkt), opText({ verb: 'add', target: 'flow', flow })).not.toThrow();
        }
        for (const a of flow.actions) seenActions.add(a.t);
        // And every flow's actions run, through whatever tables and groups they lead to.
        expect(() => runActions(w, flow.actions, 0, s, (end) => [{ verdict: 'none', masquerade: false, path: end.path }]), opText({ verb: 'add', target: 'flow', flow })).not.toThrow();
      }
      for (const g of compiled.groups) for (const b of g.buckets) for (const a of b.actions) seenActions.add(a.t);
    });
  }
  it('the fixtures use every match-field and action kind', () => {
    expect([...seenMatches].sort()).toEqual([...TRACED_MATCH_KINDS].sort());
    expect([...seenActions].sort()).toEqual([...TRACED_ACTION_KINDS].sort());
  });
});

describe('tables, priorities and registers', () => {
  it('the highest-priority matching flow runs; lower ones do not', () => {
    const rows: Row[] = [
      [0, 100, [proto('tcp'), tpDst(80)], [DROP]],
      [0, 200, [proto('tcp'), tpDst(81)], [NORMAL]],
      [0, 0, [], [NORMAL]],
    ];
    expect(verdicts(walk(rows))).toEqual(['drop']);
    expect(verdicts(walk(rows, state({ dport: 81 })))).toEqual(['none']);
    expect(verdicts(walk(rows, state({ dport: 82 })))).toEqual(['none']);
  });
  it('protocol words carry the family; addresses match networks of their family only', () => {
    const m = (f: MatchField, s = state()) => compileMatch(f)(s.pkt);
    expect(m(proto('tcp'))).toBe(true);
    expect(m(proto('tcp6'))).toBe(false);
    expect(m(proto('udp'))).toBe(false);
    expect(m(proto('ipv6'), state({ src: 'fd00::1', dst: 'fd00::2' }))).toBe(true);
    expect(m(proto('icmp6'), state({ src: 'fd00::1', dst: 'fd00::2' }))).toBe(false);
    expect(m({ t: 'icmp-type', type: 135 })).toBe(false);
    expect(m(addr('nw_src', { addr: ip('10.0.0.0'), prefix: 8 }))).toBe(true);
    expect(m(addr('nw_dst', ip('172.30.0.41')))).toBe(true);
    expect(m(addr('nw_dst', ip('172.30.0.42')))).toBe(false);
    expect(m(addr('ipv6_src', { addr: ip('::'), prefix: 0 }))).toBe(false);
  });
  it('masked register loads keep the other bits; masked matches see only theirs', () => {
    const rows: Row[] = [
      [0, 0, [], [setField(0x1f90, 0xffff, 'reg4'), setField(0x20000, 0x70000, 'reg4'), setField(0x10000, 0x70000, 'reg4'), resubmit(1)]],
      // Port 8080 kept under the state change; state 1 now.
      [1, 200, [regMatch('reg4', 0x11f90, 0x7ffff)], [NORMAL]],
      [1, 100, [], [DROP]],
    ];
    expect(verdicts(walk(rows))).toEqual(['none']);
    rows[0][3][2] = setField(0x30000, 0x70000, 'reg4');
    expect(verdicts(walk(rows))).toEqual(['drop']);
  });
  it('reg3 and xxreg3 hold endpoint addresses', () => {
    const v6 = () => state({ src: 'fd00::2', dst: 'fd00::3' });
    const rows: Row[] = [
      [0, 0, [], [{ t: 'set-ip', field: 'xxreg3', ip: ip('fd00:10:244:1::5') }, { t: 'set-ip', field: 'reg3', ip: ip('10.244.1.5') }, resubmit(1)]],
      [1, 200, [{ t: 'reg-ip', reg: 'xxreg3', ip: ip('fd00:10:244:1::5') }, { t: 'reg-ip', reg: 'reg3', ip: ip('10.244.1.5') }], [NORMAL]],
    ];
    expect(verdicts(walk(rows, v6()))).toEqual(['none']);
    rows[1][2][0] = { t: 'reg-ip', reg: 'xxreg3', ip: ip('fd00:10:244:1::6') };
    expect(verdicts(walk(rows, v6()))).toEqual(['drop']);
  });
  it('resubmit comes back for the next action; a drop or a miss in the resubmitted table ends only that table', () => {
    const rows: Row[] = [
      [0, 0, [], [resubmit(1), resubmit(2), resubmit(3)]],
      [1, 0, [], [DROP]],
      // table 2 has no flow: nothing happens there
      [3, 0, [], [NORMAL]],
    ];
    const [b] = walk(rows);
    expect(b.verdict).toBe('none');
    expect(b.path.map((s) => s.hook)).toEqual(['table 0', 'table 1', 'table 2', 'table 3']);
    expect(b.path[2].action).toMatch(/no flow matched/);
  });
  it('goto_table moves on and never comes back; a packet no output action reaches is dropped', () => {
    const [b] = walk([
      [0, 0, [], [gotoTable(4)]],
      [4, 0, [], [DROP]],
    ]);
    expect(b.verdict).toBe('drop');
    expect(b.path.at(-1)!.action).toBe('no output action ran: OVS drops the packet');
  });
  it('two flows of one priority that both match: OVS may run either, both are followed', () => {
    const bs = walk([
      [0, 100, [tpDst(80)], [DROP]],
      [0, 100, [proto('tcp')], [NORMAL]],
    ]);
    expect(verdicts(bs).sort()).toEqual(['drop', 'none']);
    expect(bs[0].path[0].action).toMatch(/2 flows of priority 100 match/);
  });
  it('a loop of resubmits ends as OVS ends it (dropped at its limit), without forking forever', () => {
    const groups: Group[] = [{ id: 1, buckets: [{ actions: [resubmit(1)] }, { actions: [resubmit(1)] }] }];
    const bs = walk([[0, 0, [], [resubmit(1)]], [1, 0, [], [groupAction(1)]]], state(), groups);
    expect(bs.length).toBeLessThanOrEqual(4);
    expect(bs.every((b) => b.verdict === 'drop' && /loops/.test(b.path.at(-1)!.action))).toBe(true);
  });
});

describe('conntrack, for a new connection', () => {
  it('ct(table=N) resumes another instance at N after the pass; this one goes on untracked', () => {
    const [b] = walk([
      [0, 100, [ctState('-trk')], [ct({ table: 1, zone: 9 }), resubmit(2)]],
      [1, 100, [ctState('+new', '+trk'), { t: 'ct-mark', value: 0, mask: 0xff }], [NORMAL]],
      // Reached by the untracked instance, before the resumed one runs.
      [2, 100, [ctState('-trk')], [IN_PORT]],
    ]);
    expect(b.path.map((s) => s.hook)).toEqual(['table 0', 'table 2', 'table 1', 'table 1']);
    expect(b.path[2].action).toMatch(/back from conntrack zone 9 \(a new connection\): ct_state \+new\+trk, ct_mark 0x0/);
    expect(b.verdict).toBe('none');
  });
  it('ct(commit, nat(dst), exec(ct_mark)) DNATs the resumed instance and marks the connection of its zone only', () => {
    const [b] = walk([
      [0, 0, [], [DNAT('10.244.1.5', 8080, 1, 7)]],
      [1, 100, [ctState('+new', '+trk'), { t: 'ct-mark', value: 0x10, mask: 0x10 }, addr('nw_dst', ip('10.244.1.5')), tpDst(8080)], [ct({ table: 2, zone: 8 })]],
      // Another zone: the connection is new there, unmarked.
      [2, 100, [{ t: 'ct-mark', value: 0, mask: 0x10 }], [ct({ table: 3, zone: 7 })]],
      // Back in the first zone: still new, with its mark.
      [3, 100, [ctState('+new', '+trk'), { t: 'ct-mark', value: 0x10, mask: 0x10 }], [NORMAL]],
    ]);
    expect(b.verdict).toBe('dnat');
    expect(b.endpoint).toBe('10.244.1.5:8080');
    expect(b.path.map((s) => s.hook)).toEqual(['table 0', 'table 1', 'table 1', 'table 2', 'table 2', 'table 3', 'table 3']);
  });
  it('nat(dst=...) without commit translates nothing; bare nat replays the zone\'s committed NAT', () => {
    const uncommitted = walk([
      [0, 0, [], [ct({ table: 1, zone: 1, nat: { t: 'dnat', ip: ip('10.244.1.5'), port: 80 } })]],
      [1, 0, [], [NORMAL]],
    ]);
    expect(uncommitted[0].verdict).toBe('none');
    const replayed = walk([
      [0, 0, [], [ct({ commit: true, table: 1, zone: 1, nat: { t: 'snat', ip: ip('169.254.0.253') } })]],
      [1, 0, [], [ct({ table: 2, zone: 1, nat: { t: 'nat' } })]],
      [2, 100, [addr('nw_src', ip('169.254.0.253'))], [NORMAL]],
    ]);
    expect(replayed[0].verdict).toBe('none');
    expect(replayed[0].masquerade).toBe(true);
  });
});

describe('groups, controller and learn', () => {
  it('a select group is not resolved: every bucket is a branch with its own registers', () => {
    const groups: Group[] = [
      {
        id: 2,
        buckets: ['10.244.2.53', '10.244.3.53'].map((e) => ({ actions: [{ t: 'set-ip', field: 'reg3', ip: ip(e) } as Action, setField(5353, 0xffff, 'reg4'), resubmit(16)] })),
      },
    ];
    const rows: Row[] = [
      [0, 0, [], [groupAction(2)]],
      ...['10.244.2.53', '10.244.3.53'].map((e): Row => [16, 200, [{ t: 'reg-ip', reg: 'reg3', ip: ip(e) }, regMatch('reg4', 5353, 0xffff)], [DNAT(e, 5353, 17)]]),
      [17, 0, [], [NORMAL]],
    ];
    const bs = walk(rows, state({ protocol: 'udp', dport: 53 }), groups);
    expect(bs.map((b) => b.endpoint)).toEqual(['10.244.2.53:5353', '10.244.3.53:5353']);
    expect(bs.map((b) => b.path.find((s) => s.hook === 'group 2')!.action)).toEqual([
      'bucket 0 of 2: set endpoint 10.244.2.53, set endpoint port 5353, resubmit to table 16',
      'bucket 1 of 2: set endpoint 10.244.3.53, set endpoint port 5353, resubmit to table 16',
    ]);
  });
  it('the no-endpoint packet-in is a reject', () => {
    const bs = walk([[0, 0, [], [{ t: 'controller', reason: 'no_match', userdata: '04' }]]]);
    expect(verdicts(bs)).toEqual(['reject']);
  });
  it('learn is noted, not executed: the trace follows the first connection', () => {
    const learn: Action = {
      t: 'learn',
      learn: { table: 14, hardTimeout: 300, priority: 200, cookie: COOKIE | 9n, ethType: 0x800, ipProto: 6, copies: ['NXM_OF_TCP_DST[]'], loads: [{ value: 1, to: 'NXM_NX_REG0[9]' }] },
    };
    const [b] = walk([[0, 0, [], [learn, resubmit(14), NORMAL]], [14, 200, [regMatch('reg0', 0x200, 0x200)], [DROP]]]);
    expect(b.verdict).toBe('none');
    expect(b.path[0].action).toMatch(/learn: this client's next connections keep this endpoint for 300 s \(table 14\)/);
  });
});

describe('every golden case: the walk reaches what the model says', () => {
  // The same expectations the real-OVS test holds ofproto/trace to (test/helpers/ovs-expect.ts).
  const asSummary = (o: Outcome) =>
    o.kind === 'endpoints'
      ? { verdict: 'dnat', endpoints: [...o.endpoints].sort() }
      : { verdict: o.kind === 'controller' ? 'reject' : o.kind === 'pass' ? 'none' : 'drop', endpoints: [] };
  for (const c of walkedCases()) {
    it(c.name, () => {
      const tracer = tracerFor(c.file, [], 'ovs');
      const model = loadModel([{ name: c.file, text: c.text }], parseArgsToOptions(c.args));
      const probes = model.families.flatMap(probesFor);
      expect(probes.length).toBeGreaterThan(0);
      for (const p of probes) {
        const got = summarize(tracer.trace({ protocol: p.protocol.toLowerCase() as L4Protocol, src: p.src, dst: p.dst, sport: 40000, dport: p.port }));
        expect({ verdict: got.verdict, endpoints: [...got.endpoints].sort(), masquerade: got.masquerade }, p.what).toEqual({ ...asSummary(p.expect), masquerade: false });
      }
    });
  }
});

describe('the compiled pipeline, walked', () => {
  const dual = path.join(ROOT, 'fixtures/ovs/dual-stack-node.yaml');
  const tracer = tracerFor(dual, [], 'ovs');
  const run = (src: string, dst: string, destPort: number, protocol = 'tcp') => tracer.trace(packetOf({ sourceIP: src, destIP: dst, destPort, protocol }));

  it('describes the path in the user\'s terms, with the flow as the rule', () => {
    const text = traceText(run('198.18.0.99', '10.96.0.53', 53, 'udp'));
    expect(text).toContain(`[table 15] ServiceLB: matched ClusterIP 10.96.0.53 udp 53 of kube-system/dns:dns/UDP → group ${groupIDCandidate(4, 'kube-system/dns:dns/UDP/cluster', 0)} (select, 2 buckets)\n`);
    expect(text).toContain('rule: priority=200,udp,reg4=0x10000/0x70000,nw_dst=10.96.0.53,tp_dst=53 actions=');
    expect(text).toContain('[table 16] EndpointDNAT: udp, endpoint 10.244.3.53, endpoint selected, endpoint port 5353 → ct commit in zone 65520, DNAT to 10.244.3.53:5353, ct_mark Service set, resume at table 17');
    expect(text).toMatch(/verdict: dnat 10\.244\.2\.53:5353, 10\.244\.3\.53:5353; masquerade: no\n$/);
  });
  it('a local endpoint reaching itself through its Service is hairpinned: SNAT to the virtual IP, out of IN_PORT', () => {
    for (const [src, dst, port, vip] of [
      ['10.244.1.5', '10.96.0.11', 8080, '169.254.0.253'],
      ['fd00:10:244:1::5', 'fd00:96::10', 80, 'fc01::aabb:ccdd:eeff'],
    ] as const) {
      const r = run(src, dst, port);
      const self = r.branches.find((b) => b.endpoint?.replace(/[[\]]/g, '').startsWith(src))!;
      expect(self.masquerade).toBe(true);
      expect(self.path.some((s) => s.action.includes(`SNAT to ${vip}`))).toBe(true);
      expect(self.path.at(-1)!.action).toMatch(/IN_PORT/);
      expect(r.branches.filter((b) => b !== self).every((b) => !b.masquerade)).toBe(true);
    }
  });
  it('ClientIP affinity: every endpoint is reachable for the first connection, and the learn is noted', () => {
    const r = run('198.18.0.99', '10.96.0.30', 80);
    expect(summarize(r).endpoints).toEqual(['10.244.1.30:8000', '10.244.2.30:8000', '10.244.3.30:8000']);
    expect(r.branches.every((b) => b.path.some((s) => s.hook === 'table 15' && s.action.startsWith('endpoint chosen for ClusterIP 10.96.0.30')))).toBe(true);
  });
  it('a load-balancer IP with source ranges drops other sources', () => {
    const r = run('1.1.1.1', '203.0.113.100', 9000, 'sctp');
    expect(summarize(r).verdict).toBe('drop');
    expect(r.branches[0].path.find((s) => s.hook === 'table 15')!.action).toMatch(/^a source outside loadBalancerSourceRanges at load-balancer IP 203\.0\.113\.100 sctp 9000/);
  });
  it('traffic no Service takes is committed and switched on, untouched', () => {
    // This snapshot has no ServiceCIDR: an address beside the ClusterIPs is nobody's.
    const r = run('198.18.0.99', '10.96.0.99', 54, 'udp');
    expect(summarize(r)).toEqual({ verdict: 'none', endpoints: [], masquerade: false });
  });
  it("a ClusterIP's unused port is rejected, and an unallocated ServiceCIDR address dropped, as kube-proxy does", () => {
    const unused = run('198.18.0.99', '10.96.0.53', 54, 'udp');
    expect(summarize(unused)).toEqual({ verdict: 'reject', endpoints: [], masquerade: false });
    expect(traceText(unused)).toContain('[table 15] ServiceLB: 10.96.0.53 is a ClusterIP, but no Service port there serves this protocol and port → reject: set no endpoint, goto table 16\n');
    const example = tracerFor(path.join(ROOT, 'examples/cluster.yaml'), [], 'ovs');
    const unallocated = example.trace(packetOf({ sourceIP: '198.18.0.99', destIP: '10.96.200.200', destPort: 80 }));
    expect(summarize(unallocated)).toEqual({ verdict: 'drop', endpoints: [], masquerade: false });
    expect(traceText(unallocated)).toContain('[table 15] ServiceLB: 10.96.0.0/16 is a ServiceCIDR, and no Service has this address and port → drop\n');
  });
});
