// The tracer on kube-proxy 1.36's forms (test/helpers/dnat-map-table.ts), in both families:
// the numgen DNAT map forks one branch per endpoint, each DNATed to its own; `ct status
// dnat` holds only for a packet a DNAT on its path translated; the hairpin set is matched
// with the addresses and port after DNAT; and the inline mark set in `services` makes the
// packet masqueraded in postrouting, its mark cleared.
import { describe, expect, it } from 'vitest';
import { parseIP } from '../../src/net/ip.js';
import type { Family, Stmt } from '../../src/nft/expr.js';
import { statementsBuilder } from '../../src/nft/ruleset.js';
import { compileProgram } from '../../src/trace/nft/program.js';
import type { PacketState } from '../../src/trace/nft/state.js';
import { walk } from '../../src/trace/nft/walk.js';
import type { Branch } from '../../src/trace/result.js';
import { DNAT_MAP_ADDRESSES, dnatMapTable, ONE_ENDPOINT_CHAIN, SERVICE_CHAIN } from '../helpers/dnat-map-table.js';

const NODE = { ip: '192.168.0.2', ip6: 'fd00:192::2' };
const OUTSIDE = { ip: '192.168.7.7', ip6: 'fd00:192::7' };

function packet(src: string, dst: string, dport: number, iif = 'eth0'): PacketState {
  return { protocol: 'tcp', saddr: parseIP(src)!, daddr: parseIP(dst)!, sport: 40000, dport, original: { daddr: parseIP(dst)!, dport }, iif, mark: 0, hook: 'prerouting', masqueraded: false, added: new Map(), path: [] };
}

function trace(family: Family, s: PacketState): Branch[] {
  return walk(compileProgram(dnatMapTable(family)), { localAddresses: [parseIP(NODE[family])!] }, s, false);
}

const hostPort = (family: Family, ip: string, port: number) => (family === 'ip' ? `${ip}:${port}` : `[${ip}]:${port}`);
const actions = (b: Branch) => b.path.map((p) => p.action);

for (const family of ['ip', 'ip6'] as const) {
  const a = DNAT_MAP_ADDRESSES[family];
  const [ep0, ep1] = a.eps;

  describe(`${family}: the numgen DNAT map`, () => {
    it('forks one branch per endpoint, each DNATed to its own', () => {
      const branches = trace(family, packet(OUTSIDE[family], a.svc, 80));
      expect(branches.map((b) => [b.verdict, b.endpoint])).toEqual([
        ['dnat', hostPort(family, ep0, a.port)],
        ['dnat', hostPort(family, ep1, a.port)],
      ]);
      expect(actions(branches[0])).toContain('numgen random mod 2 picks one of 2: every branch is followed');
      expect(branches.map((b) => b.path.find((p) => p.action.startsWith('branch '))?.action)).toEqual([
        `branch 1 of 2: dnat to ${hostPort(family, ep0, a.port)}`,
        `branch 2 of 2: dnat to ${hostPort(family, ep1, a.port)}`,
      ]);
      // Each branch is routed on its own destination.
      expect(branches.map((b) => b.path.find((p) => p.hook === 'routing')?.action)).toEqual([
        `${ep0} is not a local address: forward`,
        `${ep1} is not a local address: forward`,
      ]);
      for (const b of branches) expect(b.path.find((p) => p.chain === SERVICE_CHAIN && p.rule)?.chain).toBe(SERVICE_CHAIN);
    });

    it('with one endpoint, DNATs to it without a fork', () => {
      const branches = trace(family, packet(OUTSIDE[family], a.svc1, 80));
      expect(branches.map((b) => [b.verdict, b.endpoint])).toEqual([['dnat', hostPort(family, a.ep1, 80)]]);
      expect(branches[0].path.find((p) => p.chain === ONE_ENDPOINT_CHAIN)?.action).toBe(`numgen random mod 1: the only endpoint → dnat to ${hostPort(family, a.ep1, 80)}`);
    });
  });

  describe(`${family}: masquerading`, () => {
    it('traffic from outside the cluster is marked in services, then masqueraded with its mark cleared', () => {
      const branches = trace(family, packet(OUTSIDE[family], a.svc, 80));
      for (const b of branches) {
        expect(b.masquerade).toBe(true);
        const mark = b.path.find((p) => p.chain === 'services' && p.action.startsWith('mark set'))!;
        expect(mark.rule).toContain('comment "masquerade clusterIP traffic from outside cluster"');
        expect(mark.action).toBe('mark set mark or 0x00004000: mark is 0x00004000');
        const masq = b.path.filter((p) => p.chain === 'masquerading');
        expect(masq).toEqual([
          {
            hook: 'postrouting',
            chain: 'masquerading',
            rule: 'mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random',
            action: "mark set mark xor 0x00004000: mark is 0x00000000; masquerade fully-random: the source becomes the outgoing interface's address",
          },
        ]);
      }
    });

    it('a Pod reaching itself through its Service is masqueraded by the hairpin set, matched after DNAT', () => {
      // From ep1 to the Service: the branch DNATed back to ep1 is a hairpin, the other is not.
      const branches = trace(family, packet(ep1, a.svc, 80, 'pod0'));
      expect(branches.map((b) => [b.endpoint, b.masquerade])).toEqual([
        [hostPort(family, ep0, a.port), false],
        [hostPort(family, ep1, a.port), true],
      ]);
      const hairpin = branches[1].path.find((p) => p.chain === 'masquerading')!;
      expect(hairpin.rule).toBe(`ct status dnat ${family} saddr . ${family} daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random`);
      // No mark: a Pod's own traffic is not marked in services.
      expect(branches.flatMap((b) => b.path).some((p) => p.action.startsWith('mark set'))).toBe(false);
    });

    it('the same tuple without a DNAT on its path is not masqueraded: ct status dnat does not hold', () => {
      // Pod to Pod directly: the tuple is a hairpin set element, but nothing translated it.
      const [b] = trace(family, packet(ep1, ep1, a.port, 'pod0'));
      expect(b).toMatchObject({ verdict: 'none', masquerade: false });
      expect(b.path.some((p) => p.chain === 'masquerading')).toBe(false);
    });
  });
}

describe('ct status dnat', () => {
  const ctStatusDnat: Stmt = { t: 'match', left: { t: 'ct', key: 'status' }, op: '==', right: { t: 'sym', s: 'dnat' } };
  const drop: Stmt = { t: 'verdict', v: { kind: 'drop' } };
  /** prerouting DNATs to `to`; postrouting drops what ct status dnat matches. */
  function verdictAfter(to: string, port: number, dst: string, dport: number) {
    const b = statementsBuilder({ family: 'ip', name: 't' });
    b.chain({ name: 'pre', base: { type: 'nat', hook: 'prerouting', priority: -100 } });
    b.chain({ name: 'post', base: { type: 'nat', hook: 'postrouting', priority: 100 } });
    b.rule({ chain: 'pre', stmts: [{ t: 'dnat', ip: parseIP(to)!, port }] });
    b.rule({ chain: 'post', stmts: [ctStatusDnat, drop] });
    return walk(compileProgram(b.finish()), { localAddresses: [] }, packet('192.168.7.7', dst, dport), false).map((x) => x.verdict);
  }

  it('holds after a DNAT that changed the destination, as the kernel sets the status bit', () => {
    expect(verdictAfter('10.0.0.1', 80, '10.96.0.1', 80)).toEqual(['drop']);
    expect(verdictAfter('10.96.0.1', 8080, '10.96.0.1', 80)).toEqual(['drop']);
  });

  it('does not hold after a DNAT to the very destination the packet had', () => {
    expect(verdictAfter('10.96.0.1', 80, '10.96.0.1', 80)).toEqual(['dnat']);
  });
});
