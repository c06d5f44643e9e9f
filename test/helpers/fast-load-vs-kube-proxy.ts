// The fast-load layout's text read against kube-proxy 1.36's, compiled from the same
// cluster, one part of the table at a time: what stands outside the chains, the services
// chain, the dispatch elements and where they lead, the chains kept, the firewall chains,
// and each kept chain's rules. Each step checks its part and returns what the later steps
// need to know (which of kube-proxy's chains fast-load does in other forms).
import { expect } from 'vitest';
import { AFFINITY_SET_SIZE } from '../../src/backends/nftables/fast-load/affinity.js';
import { FILTER_PREROUTING_POST_DNAT, RECORD_CHAIN, RECORD_HASH_MOD } from '../../src/backends/nftables/fast-load/affinity-records.js';
import { parseEndpointChain, type ParsedEndpointChain } from '../../src/backends/nftables/names.js';
import { endpointJhash } from '../../src/nft/jhash.js';
import { hostPort } from '../../src/trace/packet.js';
import { endpointMapSlot } from '../../src/backends/nftables/fast-load/endpoint-map.js';
import { CLUSTER_IP_DNAT_CHAIN, drawBase } from '../../src/backends/nftables/fast-load/shared-dnat.js';
import type { Endpoint } from '../../src/model/types.js';

/** Each chain's rule lines, by name, in the order printed. */
export function chains(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const open = /^\tchain (\S+) \{$/.exec(line);
    if (open) out.set(open[1], (current = []));
    else if (line === '\t}') current = undefined;
    else if (current && line.startsWith('\t\t')) current.push(line.slice(2));
  }
  return out;
}

/** kube-proxy's text and fast-load's (elements one per line), and their chains. */
export interface Compared {
  kp: string;
  fl: string;
  /** kube-proxy's chains. */
  a: Map<string, string[]>;
  /** fast-load's chains. */
  b: Map<string, string[]>;
}

export function compared(kp: string, fl: string): Compared {
  return { kp, fl, a: chains(kp), b: chains(fl) };
}

const MARK = 'mark set mark or 0x00004000';
const SHARED_CHAIN = /^dnat-(external-|nodeport-)?(tcp|udp|sctp)-(\d+)$/;
const LOCAL_SHARED_CHAIN = /^dnat-local-(external|nodeport)-(tcp|udp|sctp)-(\d+)-(\d+)$/;
const POLICY_DNAT = /^meta l4proto (\w+) dnat (ip6? )?addr \. port to numgen random mod (\d+) map \{ (.*) \}$/;
const isFirewall = (n: string) => n.startsWith('firewall-') && n !== 'firewall-check';

/** The elements of a `map { 0 : A . P , 1 : ... }`, without their keys. */
const mapEntries = (entries: string) => entries.split(' , ').map((e) => e.replace(/^\d+ : /, ''));

/** kube-proxy's per-endpoint affinity sets' timeouts, by name. */
function affinityTimeouts(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^\tset (affinity-\S+) \{ type ip6?_?\w* ; flags dynamic,timeout ; timeout (\d+)s ; \}$/gm)) out.set(m[1], Number(m[2]));
  return out;
}

/** fast-load's endpoint-map elements: by map and key, the value. */
function endpointMapElements(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^add element ip6? kube-proxy (endpoints?-\S+) \{ (\d+) : (\S+(?: \. \d+)?) \}$/gm)) out.set(`${m[1]} ${m[2]}`, m[3]);
  return out;
}

/** The shared DNAT chains' map elements (shared-dnat.ts): by family, map and key, the value. */
function sharedMapElements(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^add element (ip6?) kube-proxy ((?:service|nodeport)-(?:local-)?endpoints-\S+) \{ (.+) : (\S+ \. \d+) \}$/gm)) out.set(`${m[1]} ${m[2]} ${m[3]}`, m[4]);
  return out;
}

/** The dispatch elements, `service-ips` and `service-nodeports`: where each key goes. */
function dispatchElements(text: string): { family: string; set: string; key: string; target: string }[] {
  return [...text.matchAll(/^add element (ip6?) kube-proxy (service-ips|service-nodeports) \{ (.+) : goto (\S+) \}$/gm)].map((m) => ({ family: m[1], set: m[2], key: m[3], target: m[4] }));
}

/**
 * Everything outside the chains is the same, but the per-endpoint affinity sets (one
 * table-wide set), the endpoint maps with their elements, the masquerade sets and the
 * affinity recording maps (expectAffinityRecords), which are fast-load's own; the
 * dispatch elements are compared by expectDispatch. (IPv4 tables: the tests' clusters are.)
 */
export function expectSameOutsideChains({ kp, fl }: Compared): void {
  const outside = (t: string) => t.split('\n').filter((l) => !l.startsWith('\t\t') && !/^\t(chain|\})/.test(l));
  expect(affinityTimeouts(kp).size).toBeGreaterThan(40);
  const expected = outside(kp).filter((l) => !l.startsWith('\tset affinity-'));
  const tableWide = `\tset affinity { typeof ip saddr . numgen random mod 1 . numgen random mod 1 ; size ${AFFINITY_SET_SIZE} ; flags dynamic,timeout ; timeout 10800s ; }`;
  expected.splice(outside(kp).findIndex((l) => l.startsWith('\tset affinity-')), 0, tableWide);
  const isDispatch = (l: string) => /^add element ip6? kube-proxy (service-ips|service-nodeports|firewall-ips) /.test(l);
  expect(kp).not.toContain('table ip6 ');
  const fastLoadOwn = /^(\tmap |add element ip kube-proxy )(endpoints|endpoint-ips|affinity-records|affinity-record-nodeports|service-endpoints|nodeport-endpoints|service-local-endpoints|nodeport-local-endpoints)-/;
  const masqueradeSets = /^(\tset |add element ip6? kube-proxy )masquerade-(service-ips|nodeports) /;
  expect(outside(fl).filter((l) => !fastLoadOwn.test(l) && !masqueradeSets.test(l) && !isDispatch(l))).toEqual(expected.filter((l) => !isDispatch(l)));
}

/**
 * The services chain marks the masquerade sets' destinations before each map, and tries
 * the ClusterIP draws after the map, before NodePorts.
 */
export function expectServicesChain({ a, b }: Compared): void {
  const services = a.get('services')!;
  const vmapAt = services.indexOf('ip daddr . meta l4proto . th dport vmap @service-ips');
  const nodePorts = services[vmapAt + 1];
  expect(services).toHaveLength(vmapAt + 2);
  expect(b.get('services')).toEqual([
    ...services.slice(0, vmapAt),
    `ip daddr . meta l4proto . th dport @masquerade-service-ips ${MARK}`,
    services[vmapAt],
    `ip daddr @cluster-ips jump ${CLUSTER_IP_DNAT_CHAIN}`,
    nodePorts.replace(' vmap @service-nodeports', ` @masquerade-nodeports ${MARK}`),
    nodePorts,
  ]);
}

/**
 * The rules of the ClusterIP draw chain, one for each protocol and endpoint count (draw i of
 * N finds A . P . B+i): by `PROTO N`, the base B.
 */
export function clusterIPDraws({ b }: Compared): Map<string, number> {
  const draws = new Map<string, number>();
  for (const r of b.get(CLUSTER_IP_DNAT_CHAIN)!) {
    const m = /^dnat ip6? addr \. port to ip6? daddr \. (\w+) dport \. numgen random mod (\d+)(?: offset (\d+))? map @service-endpoints-\1$/.exec(r);
    expect(m, r).not.toBeNull();
    const n = Number(m![2]);
    expect(Number(m![3] ?? 0)).toBe(drawBase(n));
    expect(draws.has(`${m![1]} ${n}`)).toBe(false);
    draws.set(`${m![1]} ${n}`, drawBase(n));
  }
  return draws;
}

/**
 * A Local-policy port's policy chains that fast-load does in the external chain's own rules
 * (local-policy.ts): each `goto P` of kube-proxy's external chain is fast-load's rule with
 * P's DNAT in its place, the same DNAT wherever P is gone to (checked as P's own rule by
 * expectChainRules). By policy chain, its DNAT.
 */
export function inlinedPolicies({ a, b }: Compared): Map<string, string> {
  const inlined = new Map<string, string>();
  for (const [name, rules] of a) {
    if (!name.startsWith('external-') || !b.has(name)) continue;
    const flRules = b.get(name)!;
    expect(flRules.length, name).toBe(rules.length);
    rules.forEach((r, i) => {
      const to = /goto ((?:service|local)-\S+)/.exec(r)?.[1];
      if (!to || b.has(to)) return;
      const [before, after] = r.split(`goto ${to}`);
      const fl = flRules[i];
      expect(fl.startsWith(before) && fl.endsWith(after), `${name}: ${fl}`).toBe(true);
      const dnat = fl.slice(before.length, fl.length - after.length);
      expect(dnat, `${name}: ${fl}`).toMatch(/^meta l4proto \w+ dnat /);
      expect(inlined.get(to) ?? dnat).toBe(dnat);
      inlined.set(to, dnat);
    });
  }
  return inlined;
}

/** What the dispatch elements showed fast-load does in other forms than kube-proxy's chains. */
export interface DispatchFacts {
  /** kube-proxy's chains whose work a shared chain and its maps do. */
  replaced: Set<string>;
  /** Cluster-policy external chains whose mark the services chain does. */
  markedExternals: Set<string>;
  /** The shared external chains of Local-policy ports that were gone to. */
  localShared: Set<string>;
  /** Destinations found marked in the masquerade sets. */
  markedSeen: number;
  /** ClusterIPs with no dispatch element, drawn by the ClusterIP draw chain. */
  clusterIPsDrawn: number;
}

interface DispatchContext {
  c: Compared;
  clusterIPDraws: Map<string, number>;
  /** fast-load's masquerade-set members, as `FAMILY SET KEY`. */
  marked: Set<string>;
  /** The shared maps' elements (sharedMapElements), and those found drawn so far. */
  shared: Map<string, string>;
  seenDraws: Set<string>;
  sharedSeen: number;
  facts: DispatchFacts;
}

type Dispatch = ReturnType<typeof dispatchElements>[number];

/**
 * Every dispatch element of kube-proxy's table is fast-load's with the same key, leading to
 * the same endpoints in the same order: to the same chain, or in one of fast-load's forms
 * (marked in a set, a shared external chain of Local-policy ports, a shared DNAT chain, the
 * ClusterIP draw chain); and fast-load has no other.
 */
export function expectDispatch(c: Compared, draws: Map<string, number>): DispatchFacts {
  const x: DispatchContext = {
    c,
    clusterIPDraws: draws,
    marked: new Set([...c.fl.matchAll(/^add element (ip6?) kube-proxy (masquerade-(?:service-ips|nodeports)) \{ (.+) \}$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`)),
    shared: sharedMapElements(c.fl),
    seenDraws: new Set(),
    sharedSeen: 0,
    facts: { replaced: new Set(), markedExternals: new Set(), localShared: new Set(), markedSeen: 0, clusterIPsDrawn: 0 },
  };
  const flDispatch = new Map(dispatchElements(c.fl).map((d) => [`${d.family} ${d.set} ${d.key}`, d.target]));
  for (const d of dispatchElements(c.kp)) {
    const id = `${d.family} ${d.set} ${d.key}`;
    const to = flDispatch.get(id) ?? CLUSTER_IP_DNAT_CHAIN;
    flDispatch.delete(id);
    if (to === d.target) continue;
    if (markedExternal(x, d, to)) continue;
    if (LOCAL_SHARED_CHAIN.test(to)) expectLocalSharedExternal(x, d, to);
    else expectSharedDnat(x, d, to);
  }
  // fast-load has no dispatch element kube-proxy's table lacks, and marks no other destination.
  expect([...flDispatch.keys()]).toEqual([]);
  expect(x.facts.markedSeen).toBe(x.marked.size);
  // Every element of the shared maps is one destination's draw.
  expect(x.sharedSeen).toBe(x.shared.size);
  return x.facts;
}

/**
 * kube-proxy's external chain that marks and goes to the policy chain: fast-load goes to the
 * policy chain, the services chain having marked the destination, a
 * member of the masquerade set of its kind. False when the element is not of this form.
 */
function markedExternal(x: DispatchContext, { family, set, key, target }: Dispatch, to: string): boolean {
  const external = x.c.a.get(target)!;
  const policyOf = /^goto (service-\S+)$/.exec(external[1] ?? '')?.[1];
  if (external.length !== 2 || external[0] !== MARK || !policyOf || to !== policyOf) return false;
  const member = `${family} masquerade-${set === 'service-ips' ? 'service-ips' : 'nodeports'} ${key}`;
  expect(x.marked.has(member), member).toBe(true);
  x.facts.markedSeen++;
  x.facts.markedExternals.add(target);
  return true;
}

/**
 * A Local-policy port's external chain shared by the ports of its counts: kube-proxy's
 * rules, each `goto` a policy chain replaced by the draw among that chain's endpoints keyed
 * by the destination; the maps hold them for this destination, in its order.
 */
function expectLocalSharedExternal(x: DispatchContext, { family, set, key, target }: Dispatch, to: string): void {
  const [, kind, proto, c, l] = LOCAL_SHARED_CHAIN.exec(to)!;
  expect(kind === 'nodeport').toBe(set === 'service-nodeports');
  const parts = key.split(' . ');
  const destination = set === 'service-nodeports' ? parts[1] : `${parts[0]} . ${parts[2]}`;
  const external = x.c.a.get(target)!;
  const sharedRules = x.c.b.get(to)!;
  expect(sharedRules.length, to).toBe(external.length);
  external.forEach((r, i) => {
    const policy = /goto ((?:service|local)-\S+)/.exec(r)?.[1];
    if (!policy) return expect(sharedRules[i]).toBe(r);
    const isLocal = policy.startsWith('local-');
    const n = Number(isLocal ? l : c);
    const base = isLocal || kind === 'nodeport' ? 0 : drawBase(n);
    const map = `${kind === 'nodeport' ? 'nodeport' : 'service'}-${isLocal ? 'local-' : ''}endpoints-${proto}`;
    const keyed = kind === 'nodeport' ? `${proto} dport` : `ip6? daddr \\. ${proto} dport`;
    const [before, after] = r.split(`goto ${policy}`);
    const draw = new RegExp(`^dnat ip6? addr \\. port to ${keyed} \\. numgen random mod ${n}${base ? ` offset ${base}` : ''} map @${map}$`);
    const fl = sharedRules[i];
    expect(fl.startsWith(before) && fl.endsWith(after), `${to}: ${fl}`).toBe(true);
    expect(fl.slice(before.length, fl.length - after.length), `${to}: ${fl}`).toMatch(draw);
    // kube-proxy's policy chain: `meta l4proto P dnat ... map { 0 : A . P , ... }`.
    const want = mapEntries(/map \{ (.*) \}$/.exec(x.c.a.get(policy)![0])![1]);
    expect(want.map((_, j) => x.shared.get(`${family} ${map} ${destination} . ${base + j}`))).toEqual(want);
    if (!x.seenDraws.has(`${family} ${map} ${destination}`)) x.sharedSeen += want.length;
    x.seenDraws.add(`${family} ${map} ${destination}`);
    if (isLocal) x.facts.replaced.add(policy);
  });
  x.facts.localShared.add(to);
  x.facts.replaced.add(target);
}

/**
 * A Service port without affinity or Local policy has no chains of its own: its dispatch
 * elements go to the DNAT chains of its protocol and endpoint count, whose maps hold
 * kube-proxy's endpoints, in its order, for each destination of the port; its ClusterIP has
 * no dispatch element, and is found by the rules of the ClusterIP draw chain.
 */
function expectSharedDnat(x: DispatchContext, { family, set, key, target }: Dispatch, to: string): void {
  // kube-proxy's path: the external chain (mark, then the policy chain), or the policy chain.
  let policy = target;
  let kind = '';
  if (to === CLUSTER_IP_DNAT_CHAIN) {
    expect(set, key).toBe('service-ips');
    expect(target, key).toMatch(/^service-/);
    x.facts.clusterIPsDrawn++;
  } else {
    const m = SHARED_CHAIN.exec(to);
    expect(m, `${key}: ${to}`).not.toBeNull();
    kind = m![1] ?? '';
    expect(kind === 'nodeport-').toBe(set === 'service-nodeports');
  }
  if (kind) {
    const external = x.c.a.get(target)!;
    expect(external).toEqual([MARK, expect.stringMatching(/^goto service-/)]);
    policy = external[1].slice('goto '.length);
    x.facts.replaced.add(target);
  }
  x.facts.replaced.add(policy);
  const rules = x.c.a.get(policy)!;
  expect(rules).toHaveLength(1);
  const dnat = POLICY_DNAT.exec(rules[0]);
  expect(dnat, rules[0]).not.toBeNull();
  const want = mapEntries(dnat![4]);
  const proto = dnat![1];
  if (to !== CLUSTER_IP_DNAT_CHAIN) expect([proto, String(want.length)]).toEqual([SHARED_CHAIN.exec(to)![2], SHARED_CHAIN.exec(to)![3]]);
  // `A . PROTO . P` is found as `A . P . B+i`; the NodePort's `PROTO . N` as `N . i`.
  const parts = key.split(' . ');
  const [map, destination, base] =
    set === 'service-nodeports'
      ? [`nodeport-endpoints-${proto}`, parts[1], 0]
      : [`service-endpoints-${proto}`, `${parts[0]} . ${parts[2]}`, x.clusterIPDraws.get(`${proto} ${want.length}`)];
  if (set === 'service-ips') expect(base, `${key}: no rule draws among ${want.length}`).toBe(drawBase(want.length));
  // Draw i of N (each 1/N) finds kube-proxy's endpoint i.
  expect(want.map((_, j) => x.shared.get(`${family} ${map} ${destination} . ${base! + j}`))).toEqual(want);
  x.sharedSeen += want.length;
}

/** The shared DNAT chains: the mark, then the draw from the maps of their protocol. */
export function expectSharedChainRules({ b }: Compared): string[] {
  const sharedChains = [...b.keys()].filter((n) => SHARED_CHAIN.test(n));
  for (const name of sharedChains) {
    const [, kind, proto, n] = SHARED_CHAIN.exec(name)!;
    const offset = drawBase(Number(n)) ? ` offset ${drawBase(Number(n))}` : '';
    expect(kind).toMatch(/^(external|nodeport)-$/);
    if (kind === 'external-') expect(b.get(name)).toEqual([MARK, `dnat ip addr . port to ip daddr . ${proto} dport . numgen random mod ${n}${offset} map @service-endpoints-${proto}`]);
    else expect(b.get(name)).toEqual([MARK, `dnat ip addr . port to ${proto} dport . numgen random mod ${n} map @nodeport-endpoints-${proto}`]);
  }
  return sharedChains;
}

/** Whether kube-proxy's chain `name` does the work of an endpoint of a Service with affinity. */
export function withAffinity({ a }: Compared, name: string): boolean {
  return a.get(name)!.some((r) => r.startsWith('update @affinity-'));
}

/** What fast-load does in another form than a chain of kube-proxy's. */
export interface OtherForms extends DispatchFacts {
  inlined: Map<string, string>;
}

/** fast-load's chains that record affinity clients after NAT (expectAffinityRecords). */
const isRecording = (n: string) => n === RECORD_CHAIN || n === FILTER_PREROUTING_POST_DNAT || n.startsWith(`${RECORD_CHAIN}-`);

/**
 * fast-load has kube-proxy's chains, in its order, but the endpoint chains and the chains
 * it does in other forms; and beside them only its shared chains, the ClusterIP draw chain,
 * one firewall chain per list of sources, and the chains that record affinity clients.
 */
export function expectSameChains(c: Compared, o: OtherForms): void {
  const { a, b } = c;
  const own = (n: string) => !n.startsWith('endpoint-') && !o.replaced.has(n) && !o.markedExternals.has(n) && !isFirewall(n) && !o.inlined.has(n);
  expect([...b.keys()].filter((n) => LOCAL_SHARED_CHAIN.test(n)).sort()).toEqual([...o.localShared].sort());
  const fastLoadOwn = (n: string) => SHARED_CHAIN.test(n) || LOCAL_SHARED_CHAIN.test(n) || n === CLUSTER_IP_DNAT_CHAIN || isFirewall(n) || isRecording(n);
  expect([...b.keys()].filter((n) => !fastLoadOwn(n))).toEqual([...a.keys()].filter(own));
}

/**
 * Each load-balancer IP's firewall element: kube-proxy's goes to the port's chain, fast-load's
 * to its sources' chain, exactly one for each list of sources. By kube-proxy's firewall chain,
 * fast-load's.
 */
export function sharedFirewallChains({ kp, fl, a, b }: Compared): Map<string, string> {
  const firewallTargets = (text: string) => new Map([...text.matchAll(/^add element (ip6?) kube-proxy firewall-ips \{ (.+) : goto (\S+) \}$/gm)].map((m) => [`${m[1]} ${m[2]}`, m[3]]));
  const kpFirewalls = firewallTargets(kp);
  const flFirewalls = firewallTargets(fl);
  expect([...flFirewalls.keys()]).toEqual([...kpFirewalls.keys()]);
  const sharedFirewall = new Map<string, string>();
  for (const [key, target] of kpFirewalls) {
    const to = flFirewalls.get(key)!;
    expect(to).toMatch(/^firewall-sources-[A-Z2-7]{8}$/);
    expect(sharedFirewall.get(target) ?? to, `${target} goes to two chains`).toBe(to);
    sharedFirewall.set(target, to);
  }
  // As many chains as kube-proxy's chains have contents.
  const flFirewallChains = [...b.keys()].filter(isFirewall);
  expect(new Set(sharedFirewall.values()).size).toBe(flFirewallChains.length);
  expect(flFirewallChains.length).toBe(new Set([...sharedFirewall.keys()].map((n) => a.get(n)!.join('\n'))).size);
  expect(flFirewallChains.length).toBeLessThan(sharedFirewall.size);
  return sharedFirewall;
}

/** How many of kube-proxy's chains of each kind expectChainRules compared. */
export interface ChainCounts {
  affinity: number;
  maps: number;
  firewalls: number;
}

interface RulesContext {
  c: Compared;
  timeouts: Map<string, number>;
  elements: Map<string, string>;
  sharedFirewall: Map<string, string>;
  counts: ChainCounts;
  bases: Set<string>;
  keysSeen: string[];
  /** Each Service port's recording (by its chains' base), found by its policy chains. */
  records: Map<string, Recording>;
  /** Each Service port's constant (by its chains' base). */
  constants: Map<string, number>;
}

/** A Service port's recording chain read back: its constant, seed, protocol and timeout. */
interface Recording {
  constant: number;
  seed: number;
  proto: string;
  timeout: number;
}

const RECORD_RULE = /^update @affinity \{ ip saddr \. numgen random mod 1 offset (\d+) \. jhash ip daddr \. (\w+) dport mod (\d+) seed 0x([0-9a-f]+) timeout (\d+)s \}$/;

/** The base of a Service port's chain names: "HASH-ns/svc/tcp/p80". */
const chainBase = (name: string) => name.replace(/^(service|local|external)-/, '');

/**
 * Every chain of kube-proxy's that fast-load keeps has its rules, but the endpoint choice
 * (a draw from a table-wide map), the affinity state (the table-wide set, recorded after
 * NAT) and the source ranges (one chain per list); and every element of fast-load's
 * endpoint maps belongs to one such chain's draw.
 */
export function expectChainRules(c: Compared, o: OtherForms, sharedFirewall: Map<string, string>): ChainCounts {
  const x: RulesContext = {
    c,
    timeouts: affinityTimeouts(c.kp),
    elements: endpointMapElements(c.fl),
    sharedFirewall,
    counts: { affinity: 0, maps: 0, firewalls: 0 },
    bases: new Set(),
    keysSeen: [],
    records: new Map(),
    constants: new Map(),
  };
  const throughGotos = (r: string) => r.replace(/goto (\S+)/g, (all, to: string) => o.inlined.get(to) ?? all);
  for (const [name, kpRules] of c.a) {
    // An inlined cluster chain whose ClusterIP is drawn was checked as shared, and its DNAT here.
    if ((o.replaced.has(name) && !o.inlined.has(name)) || o.markedExternals.has(name) || name === 'services') continue;
    // No endpoint chains: a Service port with affinity DNATs in its policy chain's lookups.
    if (name.startsWith('endpoint-')) {
      expect(c.b.has(name), name).toBe(false);
      continue;
    }
    const flRules = o.inlined.has(name) ? [o.inlined.get(name)!] : c.b.get(name)!;
    const last = kpRules[kpRules.length - 1] ?? '';
    const vmap = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(last);
    const dnatMap = POLICY_DNAT.exec(last);
    if (vmap) expectAffinityChain(x, name, kpRules, flRules, vmap);
    else if (dnatMap) expectEndpointMapChain(x, name, flRules, { proto: dnatMap[1], family: dnatMap[2], want: mapEntries(dnatMap[4]) });
    else if (isFirewall(name)) expectFirewallChain(x, name, kpRules);
    else if (name === 'filter-output-post-dnat') expect(flRules).toEqual([...kpRules, RECORD_JUMP]);
    else expect(flRules).toEqual(kpRules.map(throughGotos));
  }
  // Every element of an endpoint map belongs to one policy chain's rule.
  expect(new Set(x.keysSeen).size).toBe(x.keysSeen.length);
  expect(x.keysSeen.length).toBe(x.elements.size);
  expect(x.bases).toContain('first');
  // Each port's constant is its own.
  for (const [base, r] of x.records) expect(x.constants.get(base) ?? r.constant).toBe(r.constant);
  const constants = new Map([...x.constants, ...[...x.records].map(([base, r]) => [base, r.constant] as const)]);
  expect(new Set(constants.values()).size).toBe(constants.size);
  return x.counts;
}

/** What the base chains after DNAT do for the first packet of each DNATed connection. */
const RECORD_JUMP = `ct direction original ct status ! confirmed ct status dnat jump ${RECORD_CHAIN}`;

/** The port's recording chain read back (once), its timeout kube-proxy's for the sets of `affinitySets`. */
function recordingOf(x: RulesContext, policyChain: string, affinitySets: string[]): Recording {
  const base = chainBase(policyChain);
  const rules = x.c.b.get(`${RECORD_CHAIN}-${base}`);
  expect(rules, `${RECORD_CHAIN}-${base}`).toHaveLength(1);
  const m = RECORD_RULE.exec(rules![0]);
  expect(m, rules![0]).not.toBeNull();
  expect(Number(m![3])).toBe(RECORD_HASH_MOD);
  const r: Recording = { constant: Number(m![1]), proto: m![2], seed: parseInt(m![4], 16), timeout: Number(m![5]) };
  for (const set of affinitySets) expect(r.timeout, set).toBe(x.timeouts.get(set));
  expect(x.records.get(base) ?? r).toEqual(r);
  x.records.set(base, r);
  return r;
}

/**
 * A policy chain with affinity: for each of kube-proxy's lookups, in its order, the lookup
 * of the table-wide set's member for that endpoint (the port's constant and the kernel's
 * jhash of the endpoint, under the port's recording chain's seed) DNATing to it; then the
 * draw: the endpoint map's, where draw i (of N) finds kube-proxy's element i (one endpoint:
 * the DNAT to it).
 */
function expectAffinityChain(x: RulesContext, name: string, kpRules: string[], flRules: string[], vmap: RegExpExecArray): void {
  x.counts.affinity++;
  const lookups = kpRules.slice(0, -1).map((r) => /^(ip6? saddr) @(affinity-\S+) goto (\S+)$/.exec(r)!);
  expect(lookups.length).toBe(Number(vmap[1]));
  // The draw goes to the same chains as the lookups, in the same order.
  expect(vmap[2].split(' , ').map((e) => e.replace(/^\d+ : goto /, ''))).toEqual(lookups.map((m) => m[3]));
  const endpoints = lookups.map((m) => parseEndpointChain(m[3])!);
  const constant = (n: number) => `numgen random mod 1${n ? ` offset ${n}` : ''}`;
  if (endpoints.length === 1) return expectOneEndpoint(x, name, flRules, lookups[0], endpoints[0]);
  const r = recordingOf(x, name, lookups.map((m) => m[2]));
  const hashes = endpoints.map((ep) => endpointJhash(ep.ip, ep.port, RECORD_HASH_MOD, r.seed));
  expect(new Set(hashes).size).toBe(hashes.length);
  expect(flRules.slice(0, lookups.length)).toEqual(
    endpoints.map((ep, i) => `${lookups[i][1]} . ${constant(r.constant)} . ${constant(hashes[i])} @affinity meta l4proto ${r.proto} dnat to ${hostPort(ep.ip, ep.port)}`),
  );
  const draw = flRules.slice(lookups.length);
  expectEndpointMapChain(x, name, draw, { proto: r.proto, want: endpoints.map((ep) => hostPort(ep.ip, ep.port).replace(':', ' . ')) });
}

/**
 * A policy chain with affinity and one endpoint: kube-proxy's endpoint chain's work in one
 * rule, the update of the endpoint's member (the port's constant and the jhash of the
 * endpoint under the port's seed, which its recording chain has when another of its chains
 * has more endpoints, else 0) with the set's timeout, then the DNAT.
 */
function expectOneEndpoint(x: RulesContext, name: string, flRules: string[], lookup: RegExpExecArray, ep: ParsedEndpointChain): void {
  expect(flRules, name).toHaveLength(1);
  const m = /^update @affinity \{ ip saddr \. numgen random mod 1 offset (\d+) \. numgen random mod 1(?: offset (\d+))? timeout (\d+)s \} meta l4proto (\w+) dnat to (\S+)$/.exec(flRules[0]);
  expect(m, flRules[0]).not.toBeNull();
  expect(m![5]).toBe(hostPort(ep.ip, ep.port));
  expect(Number(m![3])).toBe(x.timeouts.get(lookup[2]));
  const base = chainBase(name);
  const r = x.c.b.has(`${RECORD_CHAIN}-${base}`) ? recordingOf(x, name, [lookup[2]]) : undefined;
  if (r) expect(Number(m![1])).toBe(r.constant);
  expect(Number(m![2] ?? 0)).toBe(endpointJhash(ep.ip, ep.port, RECORD_HASH_MOD, r?.seed ?? 0));
  expect(x.constants.get(base) ?? Number(m![1])).toBe(Number(m![1]));
  x.constants.set(base, Number(m![1]));
}

/**
 * A policy chain's draw from its endpoint map: kube-proxy's endpoints, `A . P`, where draw
 * i (of N, each 1/N) finds element i (its address alone when all are on one port).
 */
function expectEndpointMapChain(x: RulesContext, name: string, flRules: string[], { proto, family, want }: { proto: string; family?: string; want: string[] }): void {
  x.counts.maps++;
  const n = want.length;
  const ports = new Set(want.map((e) => e.split(' . ')[1]));
  // Endpoints on one port: a map of addresses, the port in the rule; else addresses and ports.
  const onePort = ports.size === 1 ? [...ports][0] : undefined;
  const slot = endpointMapSlot(name, want.map((e) => ({ port: Number(e.split(' . ')[1]) }) as Endpoint), proto as 'tcp');
  expect(slot.map).toMatch(onePort !== undefined ? /^endpoint-ips-[0-9a-f]{2}$/ : new RegExp(`^endpoints-${proto}-[0-9a-f]{2}$`));
  const head = onePort !== undefined ? `dnat to` : `dnat ${family ?? 'ip '}addr \\. port to`;
  const tail = onePort !== undefined ? `:${onePort}` : '';
  const rule = new RegExp(`^meta l4proto ${proto} ${head} numgen random mod ${n} offset (\\d+) map @${slot.map}${tail}$`).exec(flRules.join('\n'));
  expect(rule, flRules.join('\n')).not.toBeNull();
  const base = Number(rule![1]);
  x.bases.add(base === slot.bases(0) ? 'first' : 'probed');
  const inMap = onePort !== undefined ? want.map((e) => e.split(' . ')[0]) : want;
  expect(want.map((_, i) => x.elements.get(`${slot.map} ${base + i}`))).toEqual(inMap);
  want.forEach((_, i) => x.keysSeen.push(`${slot.map} ${base + i}`));
}

/**
 * The recording after NAT: both base chains after DNAT jump to the recording chain for the
 * first packet of each DNATed connection, which finds the port by the connection's original
 * destination: each of kube-proxy's dispatch elements to a chain of a port with affinity is
 * an element of the protocol's recording map, to that port's recording chain (NodePorts on a
 * NodePort address that is no Service address), and there is no other. Returns how many.
 */
export function expectAffinityRecords({ kp, fl, b }: Compared): number {
  expect(b.get(FILTER_PREROUTING_POST_DNAT)).toEqual(['type filter hook prerouting priority -90 ;', RECORD_JUMP]);
  const want: string[] = [];
  for (const d of dispatchElements(kp)) {
    const record = `${RECORD_CHAIN}-${chainBase(d.target)}`;
    if (!b.has(record)) continue;
    const parts = d.key.split(' . ');
    want.push(d.set === 'service-ips' ? `affinity-records-${parts[1]} { ${parts[0]} . ${parts[2]} : goto ${record} }` : `affinity-record-nodeports-${parts[0]} { ${parts[1]} : goto ${record} }`);
  }
  const all = [...fl.matchAll(/^add element ip kube-proxy (affinity-record\S+ \{ .+ \})$/gm)].map((m) => m[1]);
  // A Service address on a recorded NodePort's port returns: it was no NodePort connection.
  const returns = all.filter((g) => g.endsWith(' : return }'));
  for (const r of returns) {
    const [, p, port] = /^affinity-records-(\w+) \{ \S+ \. (\d+) : return \}$/.exec(r)!;
    expect(all.some((g) => g.startsWith(`affinity-record-nodeports-${p} { ${port} : goto `)), r).toBe(true);
  }
  const got = all.filter((g) => !returns.includes(g));
  expect(got.sort()).toEqual(want.sort());
  const protos = [...new Set(got.map((g) => /^affinity-record(?:s|-nodeports)-(\w+) /.exec(g)![1]))];
  const rules = b.get(RECORD_CHAIN)!;
  for (const p of protos) {
    const maps = `meta l4proto ${p} ct original ip daddr . ct original proto-dst vmap @affinity-records-${p}`;
    const nodePorts = `meta l4proto ${p} ct original ip daddr @nodeport-ips ct original proto-dst vmap @affinity-record-nodeports-${p}`;
    expect(rules).toContain(maps);
    if (got.some((g) => g.startsWith(`affinity-record-nodeports-${p} `))) expect(rules).toContain(nodePorts);
  }
  expect(rules.length).toBe(new Set(got.map((g) => g.split(' ')[0])).size);
  return got.length;
}

/** A firewall chain: kube-proxy's one rule, `ip saddr != RANGES drop`, as a return per range, then the drop. */
function expectFirewallChain(x: RulesContext, name: string, kpRules: string[]): void {
  x.counts.firewalls++;
  const m = /^ip saddr != (?:\{ (.*) \}|(\S+)) drop$/.exec(kpRules[0]);
  expect(kpRules).toHaveLength(1);
  const ranges = m![1] ? m![1].split(' , ') : [m![2]];
  expect(x.c.b.get(x.sharedFirewall.get(name)!)).toEqual([...ranges.map((r) => `ip saddr ${r} return`), 'drop']);
}

/** No anonymous set is left in a Service's chains. */
export function expectNoAnonymousSets({ b }: Compared): void {
  for (const [name, rules] of b) {
    if (name !== 'cluster-ips-check') for (const r of rules) expect(r.replace(/update @affinity \{ [^}]* \}/g, '')).not.toContain('{ ');
  }
}
