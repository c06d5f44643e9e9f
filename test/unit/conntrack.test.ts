// `diff --conntrack`: which changes give which `conntrack -D` commands. Each case is named
// after the part of kube-proxy's rule (pkg/proxy/conntrack/cleanup.go) it follows: for each
// UDP Service port with serving endpoints, clear the entries to its ClusterIP, external
// IPs, load-balancer IPs or NodePort whose reply source is not a serving endpoint; leave TCP
// and Service ports without serving endpoints alone. The live table is the one compiled
// from the snapshot before the change, as a node that loaded it lists it.
import { describe, expect, it } from 'vitest';
import { compileFamily } from '../../src/backends/nftables/index.js';
import type { Layout } from '../../src/backends/nftables/layout.js';
import { CLUSTER_IP_DNAT_CHAIN } from '../../src/backends/nftables/fast-load/shared-dnat.js';
import { StatementStore } from '../../src/nft/ruleset.js';
import { compileOvsDumpForm } from '../../src/backends/ovs/index.js';
import { commandText, conntrackDeletes, dnatTargets, NFT_SCRIPT } from '../../src/conntrack/nft.js';
import { compiledLive, ovsCommandText, ovsConntrackLive, ovsConntrackSnapshot, OVS_SCRIPT } from '../../src/conntrack/ovs.js';
import { conntrackSnapshot } from '../../src/conntrack/snapshot.js';
import { conntrackScript, staleDeletes, type ConntrackDelete } from '../../src/conntrack/stale.js';
import { contentsView } from '../../src/live/view.js';
import type { Endpoint, FamilyModel, ServicePort } from '../../src/model/types.js';
import { formatIP, parseCIDR, parseIP } from '../../src/net/ip.js';
import { endpoint, familyModel, ips, servicePort, type EpSpec } from './factory.js';

const ip = (s: string) => parseIP(s)!;

function dns(over: Partial<ServicePort> = {}): ServicePort {
  return servicePort({ id: { namespace: 'kube-system', name: 'dns', port: 'dns', protocol: 'UDP' }, clusterIP: ip('172.30.0.10'), port: 53, ...over });
}

const eps = (...specs: (string | EpSpec)[]): Endpoint[] => specs.map((s) => endpoint(typeof s === 'string' ? { ip: s } : s));

function v6(sp: ServicePort, e: Endpoint[]): FamilyModel {
  return familyModel(sp, e, {
    family: 6,
    primaryNodeIP: ip('2001:db8::1'),
    nodeIPs: [ip('2001:db8::1')],
    serviceCIDRs: [parseCIDR('fd00:30::/108')!.cidr],
    localDetector: { mode: 'cidr', cidr: parseCIDR('fd00:10::/48')!.cidr },
    nodePortAddresses: { matchAll: false, ips: [ip('2001:db8::1')] },
  });
}

/** The commands that moving a node from `before` (null: no table loaded) to `after` asks for. */
function commands(before: FamilyModel | null, after: FamilyModel, layout: Layout = 'kube-proxy'): string[] {
  const table = (m: FamilyModel) => contentsView(compileFamily(m, { tableName: 'kube-proxy', layout }, [], new StatementStore()));
  const live = before ? [table(before)] : [];
  const snapshot = conntrackSnapshot({ families: [after] });
  return conntrackDeletes(snapshot, live, [table(after)]).map(commandText);
}

/**
 * The deletes that moving a bridge from `before` (null: an empty bridge) to `after` asks
 * for, with the ovs pipeline; `sameSnapshot`: with the nftables side's snapshot (its
 * NodePort addresses), to compare the two backends' reading of the live rules alone.
 */
function ovsDeletes(before: FamilyModel | null, after: FamilyModel, sameSnapshot = false): ConntrackDelete[] {
  const read = (m: FamilyModel | null) => (m ? compiledLive(compileOvsDumpForm([m], [])) : ovsConntrackLive([], []));
  const model = { families: [after] };
  return staleDeletes(sameSnapshot ? conntrackSnapshot(model) : ovsConntrackSnapshot(model), read(before), read(after));
}

const ovsCommands = (before: FamilyModel | null, after: FamilyModel): string[] => ovsDeletes(before, after).map(ovsCommandText);

const A = '10.180.0.1';
const B = '10.180.0.2';
const C = '10.180.0.3';

describe("kube-proxy's rule, case by case", () => {
  it('endpoint removed: entries to the ClusterIP answered by it are cleared', () => {
    expect(commands(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A)))).toEqual([
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${B}`,
    ]);
  });

  it('endpoint stopped serving (not ready, not serving): cleared as if removed', () => {
    expect(commands(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A, { ip: B, ready: false, serving: false, terminating: true })))).toEqual([
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${B}`,
    ]);
  });

  it('endpoint terminating but serving: still a serving endpoint, its entries kept', () => {
    const after = familyModel(dns(), eps(A, { ip: B, ready: false, serving: true, terminating: true }));
    expect(commands(familyModel(dns(), eps(A, B)), after)).toEqual([]);
  });

  it('serving endpoints are counted whatever node they are on (traffic policy and topology ignored)', () => {
    const local = dns({ internalPolicyLocal: true, externalPolicyLocal: true });
    expect(commands(familyModel(local, eps({ ip: A, local: true }, { ip: B, local: true })), familyModel(local, eps({ ip: A, local: true }, B)))).toEqual([]);
  });

  it('Service from no endpoints to some: entries sent while it had none (not translated, reply source the Service address) are cleared', () => {
    expect(commands(familyModel(dns(), []), familyModel(dns(), eps(A)))).toEqual(['conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src 172.30.0.10']);
  });

  it('a Service the live table did not have at all: its untranslated entries are cleared as well', () => {
    expect(commands(null, familyModel(dns(), eps(A)))).toEqual(['conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src 172.30.0.10']);
  });

  it('Service to no endpoints: nothing cleared (a Service without serving endpoints is left alone)', () => {
    expect(commands(familyModel(dns(), eps(A, B)), familyModel(dns(), []))).toEqual([]);
    expect(commands(familyModel(dns(), eps(A, B)), familyModel(dns(), eps({ ip: A, ready: false, serving: false, terminating: true })))).toEqual([]);
  });

  it('TCP: nothing cleared, endpoint removed or not', () => {
    const tcp = dns({ id: { namespace: 'kube-system', name: 'dns', port: 'dns-tcp', protocol: 'TCP' } });
    expect(commands(familyModel(tcp, eps(A, B)), familyModel(tcp, eps(A)))).toEqual([]);
    expect(commands(familyModel(tcp, []), familyModel(tcp, eps(A)))).toEqual([]);
  });

  it('NodePort: entries to the NodePort on any address answered by a removed endpoint are cleared', () => {
    const np = dns({ nodePort: 30053 });
    expect(commands(familyModel(np, eps(A, B, C)), familyModel(np, eps(A)))).toEqual([
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${B}`,
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${C}`,
      `conntrack -D -p udp --orig-port-dst 30053 --reply-src ${B}`,
      `conntrack -D -p udp --orig-port-dst 30053 --reply-src ${C}`,
    ]);
  });

  it('NodePort from no endpoints to some: entries answered by the node itself are cleared', () => {
    const np = dns({ nodePort: 30053 });
    expect(commands(familyModel(np, []), familyModel(np, eps(A)))).toEqual([
      'conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src 172.30.0.10',
      'conntrack -D -p udp --orig-port-dst 30053 --reply-src 192.168.0.2',
    ]);
  });

  it('external IP: its entries answered by a removed endpoint are cleared', () => {
    const ext = dns({ externalIPs: [ip('192.168.99.22')] });
    expect(commands(familyModel(ext, eps(A, B)), familyModel(ext, eps(A)))).toEqual([
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${B}`,
      `conntrack -D -p udp --orig-dst 192.168.99.22 --orig-port-dst 53 --reply-src ${B}`,
    ]);
  });

  it('load-balancer IP: its entries answered by a removed endpoint are cleared', () => {
    const lb = dns({ loadBalancerVIPs: [ip('5.6.7.8')] });
    expect(commands(familyModel(lb, eps(A, B)), familyModel(lb, eps(B)))).toEqual([
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${A}`,
      `conntrack -D -p udp --orig-dst 5.6.7.8 --orig-port-dst 53 --reply-src ${A}`,
    ]);
  });

  it('an external IP new to the Service: entries to it were not translated, so those are cleared', () => {
    const after = dns({ externalIPs: [ip('192.168.99.22')] });
    expect(commands(familyModel(dns(), eps(A)), familyModel(after, eps(A)))).toEqual([
      'conntrack -D -p udp --orig-dst 192.168.99.22 --orig-port-dst 53 --reply-src 192.168.99.22',
    ]);
  });

  it('IPv6: the same rule, with -f ipv6', () => {
    const six = dns({ family: 6, clusterIP: ip('fd00:30::10'), nodePort: 30053 });
    expect(commands(v6(six, eps('fd00:10:180::1', 'fd00:10:180::2')), v6(six, eps('fd00:10:180::1')))).toEqual([
      'conntrack -D -f ipv6 -p udp --orig-dst fd00:30::10 --orig-port-dst 53 --reply-src fd00:10:180::2',
      'conntrack -D -f ipv6 -p udp --orig-port-dst 30053 --reply-src fd00:10:180::2',
    ]);
    expect(commands(v6(six, []), v6(six, eps('fd00:10:180::1')))).toEqual([
      'conntrack -D -f ipv6 -p udp --orig-dst fd00:30::10 --orig-port-dst 53 --reply-src fd00:30::10',
      'conntrack -D -f ipv6 -p udp --orig-port-dst 30053 --reply-src 2001:db8::1',
    ]);
  });

  it('unchanged: nothing, and the script is empty', () => {
    const np = dns({ nodePort: 30053, externalIPs: [ip('192.168.99.22')] });
    expect(commands(familyModel(np, eps(A, B)), familyModel(np, eps(A, B)))).toEqual([]);
    expect(conntrackScript([], NFT_SCRIPT)).toBe('');
  });

  it('external IP of a Local-policy Service without local endpoints: dropped before and after, so nothing untranslated to clear', () => {
    const local = dns({ externalPolicyLocal: true, externalIPs: [ip('192.168.99.22')], nodePort: 30053 });
    expect(commands(familyModel(local, eps(A, B)), familyModel(local, eps(A, B)))).toEqual([]);
    // Its endpoint removed: the ClusterIP's and the external IP's entries to it go all the same.
    expect(commands(familyModel(local, eps(A, B)), familyModel(local, eps(A)))).toEqual([
      `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${B}`,
      `conntrack -D -p udp --orig-dst 192.168.99.22 --orig-port-dst 53 --reply-src ${B}`,
      `conntrack -D -p udp --orig-port-dst 30053 --reply-src ${B}`,
    ]);
  });

  it('an endpoint address that still serves on another port: kept (the rule compares addresses)', () => {
    const moved = eps(A, B).map((e) => (e.ip.bytes[3] === 2 ? { ...e, port: 5353, key: `${B}:5353` } : e));
    expect(commands(familyModel(dns(), eps(A, B)), familyModel(dns(), moved))).toEqual([]);
  });
});

/** Whether fast-load's table for `m` sends the Service port to the DNAT chains shared by ports (shared-dnat.ts). */
function sharesChains(m: FamilyModel): boolean {
  const t = compileFamily(m, { tableName: 'kube-proxy', layout: 'fast-load' }, [], new StatementStore());
  // A UDP DNAT shared by ports: its ClusterIP's draw, or a chain for its other destinations.
  return t.chains.some((c) => /^dnat-(external-|nodeport-)udp-\d+$/.test(c.chain.name) || (c.chain.name === CLUSTER_IP_DNAT_CHAIN && c.rules.length > 0));
}

describe('the fast-load layout: the endpoints the shared DNAT chains\' maps hold are read for each destination', () => {
  const np = dns({ nodePort: 30053 });
  const six = dns({ family: 6, clusterIP: ip('fd00:30::10') });
  const cases: [string, FamilyModel | null, FamilyModel][] = [
    ['ClusterIP, one endpoint of three removed', familyModel(dns(), eps(A, B, C)), familyModel(dns(), eps(A, C))],
    ['ClusterIP, the first removed (every draw after it moves)', familyModel(dns(), eps(A, B, C)), familyModel(dns(), eps(B, C))],
    ['NodePort, one endpoint of two removed', familyModel(np, eps(A, B)), familyModel(np, eps(B))],
    ['from its own chains to the shared ones', familyModel(np, eps(A, B, C, '10.180.0.4')), familyModel(np, eps(A))],
    ['IPv6', v6(six, eps('fd00:10:180::1', 'fd00:10:180::2')), v6(six, eps('fd00:10:180::2'))],
  ];
  for (const [name, before, after] of cases) {
    it(`${name}: the same commands as from kube-proxy's layout`, () => {
      expect(sharesChains(after)).toBe(true);
      if (name.startsWith('from its own')) expect(before && sharesChains(before)).toBe(false);
      const kp = commands(before, after);
      expect(kp.length).toBeGreaterThan(0);
      expect(commands(before, after, 'fast-load')).toEqual(kp);
    });
  }
});

describe('the fast-load layout: the endpoints its maps hold are read from their key ranges', () => {
  const np = dns({ nodePort: 30053, externalIPs: [ip('192.168.99.22')], loadBalancerVIPs: [ip('5.6.7.8')] });
  const six = dns({ family: 6, clusterIP: ip('fd00:30::10'), nodePort: 30053 });
  const cases: [string, FamilyModel | null, FamilyModel][] = [
    ['one endpoint of three removed', familyModel(np, eps(A, B, C)), familyModel(np, eps(A, C))],
    ['the first endpoint removed (every key after it moves)', familyModel(np, eps(A, B, C)), familyModel(np, eps(B, C))],
    ['all but one removed', familyModel(np, eps(A, B, C)), familyModel(np, eps(C))],
    ['from no endpoints to some', familyModel(np, []), familyModel(np, eps(A))],
    ['no table before', null, familyModel(np, eps(A, B))],
    ['with session affinity (no map: the rules DNAT)', familyModel(dns({ affinityTimeout: 300 }), eps(A, B)), familyModel(dns({ affinityTimeout: 300 }), eps(A))],
    // One endpoint: the ClusterIP's element goes to the endpoint chain, without a policy chain.
    ['with session affinity, one endpoint replaced by another', familyModel(dns({ affinityTimeout: 300 }), eps(A)), familyModel(dns({ affinityTimeout: 300 }), eps(B))],
    ['IPv6', v6(six, eps('fd00:10:180::1', 'fd00:10:180::2', 'fd00:10:180::3', 'fd00:10:180::4')), v6(six, eps('fd00:10:180::2', 'fd00:10:180::3', 'fd00:10:180::4'))],
  ];
  for (const [name, before, after] of cases) {
    it(`${name}: the same commands as from kube-proxy's layout`, () => {
      // Too many endpoints for its destinations: the port keeps its chains and endpoint map.
      if (before) expect(sharesChains(before)).toBe(false);
      const kp = commands(before, after);
      expect(kp.length).toBeGreaterThan(0);
      expect(commands(before, after, 'fast-load')).toEqual(kp);
    });
  }
});

describe('the fast-load layout: a Local-policy port\'s external chain that DNATs in place of its policy chains, or the shared one, is read', () => {
  const local = dns({ externalPolicyLocal: true, externalIPs: [ip('192.168.99.22')], nodePort: 30053 });
  // Six external destinations: too many for the shared chains (local-policy.ts).
  const wide = dns({
    externalPolicyLocal: true,
    externalIPs: ['192.168.99.22', '192.168.99.23', '192.168.99.24', '192.168.99.25'].map(ip),
    loadBalancerVIPs: [ip('5.6.7.8')],
    nodePort: 30053,
  });
  const pods = { localDetector: { mode: 'cidr' as const, cidr: parseCIDR('10.180.0.0/16')!.cidr } };
  const at = (e: Endpoint[], sp = local) => familyModel(sp, e, pods);
  const here = (a: string): EpSpec => ({ ip: a, local: true });
  /** fast-load's form of the port: the shared chains, or how many policy chains of its own it has (its external chain has the rest). */
  const form = (m: FamilyModel) => {
    const names = compileFamily(m, { tableName: 'kube-proxy', layout: 'fast-load' }, [], new StatementStore()).chains.map((c) => c.chain.name);
    if (names.some((n) => /^dnat-local-(external|nodeport)-udp-/.test(n))) return 'shared';
    expect(names.some((n) => n.startsWith('external-'))).toBe(true);
    return names.filter((n) => /^(service|local)-[A-Z2-7]{8}-/.test(n)).length;
  };
  const cases: [string, FamilyModel, FamilyModel, 'shared' | number][] = [
    ['two endpoints, one local, the other removed', at(eps(here(A), B)), at(eps(here(A))), 'shared'],
    ['a local endpoint removed of three (from a table with the cluster chain)', at(eps(here(A), here(B), C)), at(eps(here(A), C)), 'shared'],
    ['no local endpoint, one of two removed', at(eps(A, B)), at(eps(A)), 'shared'],
    // The local endpoint terminating but serving, the only local one: the local draw's endpoint is none of the cluster draw's.
    ['a terminating local endpoint and ready ones elsewhere, one of those removed', at(eps({ ip: A, local: true, ready: false, terminating: true }, B, C)), at(eps({ ip: A, local: true, ready: false, terminating: true }, B)), 'shared'],
    ['six destinations, two endpoints, one local, the other removed (both policy chains in the external chain)', at(eps(here(A), B), wide), at(eps(here(A)), wide), 0],
    ['six destinations, three endpoints, one removed (the cluster chain kept)', at(eps(here(A), B, C, '10.180.0.4'), wide), at(eps(here(A), B, C), wide), 1],
  ];
  for (const [name, before, after, formAfter] of cases) {
    it(`${name}: the same commands as from kube-proxy's layout`, () => {
      expect(form(after)).toBe(formAfter);
      const kp = commands(before, after);
      expect(kp.length).toBeGreaterThan(0);
      expect(commands(before, after, 'fast-load')).toEqual(kp);
    });
  }
});

describe('the script', () => {
  it('names each Service port, and goes on past a command that matched nothing', () => {
    const snapshot = conntrackSnapshot({ families: [familyModel(dns(), eps(A))] });
    const live = [contentsView(compileFamily(familyModel(dns(), eps(A, B)), { tableName: 'kube-proxy' }, [], new StatementStore()))];
    const wanted = [contentsView(compileFamily(familyModel(dns(), eps(A)), { tableName: 'kube-proxy' }, [], new StatementStore()))];
    expect(conntrackScript(conntrackDeletes(snapshot, live, wanted), NFT_SCRIPT)).toBe(
      [
        '# Run after the nft transaction is applied (sh FILE): clears UDP entries the new rules would not make.',
        '# kube-system/dns:dns (UDP, IPv4)',
        `conntrack -D -p udp --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src ${B} || true`,
        '',
      ].join('\n'),
    );
  });
});

describe('the ovs backend: the same rule, as flush-conntrack commands in the DNAT zone', () => {
  const FLUSH4 = 'ovs-appctl dpctl/flush-conntrack zone=65520 ct_nw_proto=17';
  const FLUSH6 = 'ovs-appctl dpctl/flush-conntrack zone=65510 ct_nw_proto=17';

  it('endpoint removed: entries to the ClusterIP answered by it are cleared', () => {
    expect(ovsCommands(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A)))).toEqual([`${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${B}`]);
  });

  it('endpoint stopped serving: cleared; terminating but serving: kept', () => {
    expect(ovsCommands(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A, { ip: B, ready: false, serving: false, terminating: true })))).toEqual([
      `${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${B}`,
    ]);
    expect(ovsCommands(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A, { ip: B, ready: false, serving: true, terminating: true })))).toEqual([]);
  });

  it('Service from no endpoints (a group whose bucket rejects) to some: entries with the Service address as reply source are cleared', () => {
    expect(ovsCommands(familyModel(dns(), []), familyModel(dns(), eps(A)))).toEqual([`${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=172.30.0.10`]);
    expect(ovsCommands(null, familyModel(dns(), eps(A)))).toEqual([`${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=172.30.0.10`]);
  });

  it('Service to no endpoints, and TCP: nothing cleared', () => {
    expect(ovsCommands(familyModel(dns(), eps(A, B)), familyModel(dns(), []))).toEqual([]);
    const tcp = dns({ id: { namespace: 'kube-system', name: 'dns', port: 'dns-tcp', protocol: 'TCP' } });
    expect(ovsCommands(familyModel(tcp, eps(A, B)), familyModel(tcp, eps(A)))).toEqual([]);
  });

  it('NodePort, external IP and load-balancer IP: each destination of a removed endpoint, the NodePort on any address', () => {
    const all = dns({ nodePort: 30053, externalIPs: [ip('192.168.99.22')], loadBalancerVIPs: [ip('5.6.7.8')] });
    expect(ovsCommands(familyModel(all, eps(A, B)), familyModel(all, eps(A)))).toEqual([
      `${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${B}`,
      `${FLUSH4},ct_nw_dst=192.168.99.22,ct_tp_dst=53 ct_nw_src=${B}`,
      `${FLUSH4},ct_nw_dst=5.6.7.8,ct_tp_dst=53 ct_nw_src=${B}`,
      `${FLUSH4},ct_tp_dst=30053 ct_nw_src=${B}`,
    ]);
  });

  it('Local external policy: the local group, and the short-circuit of local Pods to the cluster group, are where traffic went', () => {
    const local = dns({ externalPolicyLocal: true, externalIPs: [ip('192.168.99.22')], nodePort: 30053 });
    expect(ovsCommands(familyModel(local, eps(A, B)), familyModel(local, eps(A, B)))).toEqual([]);
    // Without a Pod CIDR there is no short-circuit: external traffic met the empty local group (rejected, no entry).
    expect(ovsCommands(familyModel(local, eps(A, B)), familyModel(local, eps(A)))).toEqual([`${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${B}`]);
    const pods = { podCIDRs: [parseCIDR('10.0.1.0/24')!.cidr] };
    expect(ovsCommands(familyModel(local, eps(A, B), pods), familyModel(local, eps(A), pods))).toEqual([
      `${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${B}`,
      `${FLUSH4},ct_nw_dst=192.168.99.22,ct_tp_dst=53 ct_nw_src=${B}`,
      `${FLUSH4},ct_tp_dst=30053 ct_nw_src=${B}`,
    ]);
  });

  it("NodePort from no endpoints to some: untranslated entries answered by a node address or the virtual NodePort IP (the host's own NodePort traffic)", () => {
    const np = dns({ nodePort: 30053 });
    expect(ovsCommands(familyModel(np, []), familyModel(np, eps(A)))).toEqual([
      `${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=172.30.0.10`,
      `${FLUSH4},ct_tp_dst=30053 ct_nw_src=169.254.0.252`,
      `${FLUSH4},ct_tp_dst=30053 ct_nw_src=192.168.0.2`,
    ]);
  });

  it('session affinity: the buckets still name the endpoints', () => {
    const sticky = dns({ affinityTimeout: 600 } as Partial<ServicePort>);
    expect(ovsCommands(familyModel(sticky, eps(A, B)), familyModel(sticky, eps(B)))).toEqual([`${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${A}`]);
  });

  it('IPv6: ct_ipv6_dst and ct_ipv6_src in zone 65510 (xxreg3 in the buckets)', () => {
    const six = dns({ family: 6, clusterIP: ip('fd00:30::10'), nodePort: 30053 });
    expect(ovsCommands(v6(six, eps('fd00:10:180::1', 'fd00:10:180::2')), v6(six, eps('fd00:10:180::1')))).toEqual([
      `${FLUSH6},ct_ipv6_dst=fd00:30::10,ct_tp_dst=53 ct_ipv6_src=fd00:10:180::2`,
      `${FLUSH6},ct_tp_dst=30053 ct_ipv6_src=fd00:10:180::2`,
    ]);
    expect(ovsCommands(v6(six, []), v6(six, eps('fd00:10:180::1')))).toEqual([
      `${FLUSH6},ct_ipv6_dst=fd00:30::10,ct_tp_dst=53 ct_ipv6_src=fd00:30::10`,
      `${FLUSH6},ct_tp_dst=30053 ct_ipv6_src=2001:db8::1`,
      `${FLUSH6},ct_tp_dst=30053 ct_ipv6_src=fc01::aabb:ccdd:eefe`,
    ]);
  });

  it('the script: the ovs header, a line per delete, empty when nothing is stale', () => {
    expect(conntrackScript(ovsDeletes(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A, B))), OVS_SCRIPT)).toBe('');
    expect(conntrackScript(ovsDeletes(familyModel(dns(), eps(A, B)), familyModel(dns(), eps(A))), OVS_SCRIPT)).toBe(
      [
        '# Run after the ovs-ofctl bundle is applied (sh FILE): clears UDP entries the new flows would not make.',
        '# kube-system/dns:dns (UDP, IPv4)',
        `${FLUSH4},ct_nw_dst=172.30.0.10,ct_tp_dst=53 ct_nw_src=${B}`,
        '',
      ].join('\n'),
    );
  });

  // The backends differ in one place: without a Pod CIDR the ovs pipeline has no
  // short-circuit, so a Local-policy external address without local endpoints sends nothing
  // anywhere (the case above); with one, they agree. (With internalTrafficPolicy Local the
  // nftables side names every endpoint chain of the Service port, the ovs side only the
  // local group's: more precise, not compared here.)
  it('gives the deletes the nftables backend gives, change by change', () => {
    const pods = { podCIDRs: [parseCIDR('10.0.1.0/24')!.cidr] };
    const np = dns({ nodePort: 30053, externalIPs: [ip('192.168.99.22')], loadBalancerVIPs: [ip('5.6.7.8')] });
    const local = dns({ externalPolicyLocal: true, externalIPs: [ip('192.168.99.22')], nodePort: 30053 });
    const sets = [eps(), eps(A), eps(A, B), eps(B, C), eps({ ip: A, local: true }, B), eps(A, { ip: B, ready: false, serving: false, terminating: true })];
    for (const sp of [dns(), np, local]) {
      for (const before of sets) {
        for (const after of sets) {
          const nft = commands(familyModel(sp, before, pods), familyModel(sp, after, pods));
          expect(ovsDeletes(familyModel(sp, before, pods), familyModel(sp, after, pods), true).map(commandText), `${ips(before)} -> ${ips(after)}`).toEqual(nft);
        }
      }
    }
  });
});

describe('the endpoints a policy chain DNATs to (kube-proxy 1.36 on, no endpoint chains)', () => {
  const targets = (rules: string[], family: 4 | 6) => dnatTargets(rules, family).map(formatIP);

  it('reads a numgen map as kproxc writes it and as nft lists it, and a plain dnat', () => {
    expect(targets(['meta l4proto udp dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.4 . 53 , 1 : 10.180.0.5 . 53 }'], 4)).toEqual(['10.180.0.4', '10.180.0.5']);
    expect(targets(['meta l4proto udp dnat ip to numgen random mod 2 map { 0 : 10.244.0.10 . 9898, 1 : 10.244.0.8 . 9898 }'], 4)).toEqual(['10.244.0.10', '10.244.0.8']);
    expect(targets(['meta l4proto udp dnat to 10.180.0.1:53'], 4)).toEqual(['10.180.0.1']);
    expect(targets(['meta l4proto udp dnat to [fd00::1]:53'], 6)).toEqual(['fd00::1']);
    expect(targets(['meta l4proto udp dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00::1 . 53 , 1 : fd00::2 . 53 }'], 6)).toEqual(['fd00::1', 'fd00::2']);
  });

  it('reads nothing from rules that do not DNAT, or of the other family', () => {
    expect(targets(['ip daddr 172.30.0.41 udp dport 53 ip saddr != 10.0.0.0/8 jump mark-for-masquerade'], 4)).toEqual([]);
    expect(targets(['meta l4proto udp dnat to 10.180.0.1:53'], 6)).toEqual([]);
  });
});
