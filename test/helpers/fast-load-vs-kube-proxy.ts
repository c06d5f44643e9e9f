// The fast-load layout's text read against kube-proxy 1.36's, compiled from the same
// cluster, one part of the table at a time: what stands outside the chains, the services
// chain, the dispatch elements and where they lead, the chains kept, the firewall chains,
// and each kept chain's rules. Each step checks its part and returns what the later steps
// need to know (which of kube-proxy's chains fast-load does in other forms).
import { expect } from 'vitest';
import { AFFINITY_SET_SIZE, affinityConstants } from '../../src/backends/nftables/fast-load/affinity.js';
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

/** The table-wide set's key that stands for kube-proxy's set `set`, for the client address `addr`. */
function tableWideKey(set: string, addr: string): string {
  const [a, b] = affinityConstants(set);
  return `${addr} . numgen random mod 1 offset ${a} . numgen random mod 1 offset ${b}`;
}

/**
 * The work of one of kube-proxy's endpoint chains as fast-load writes it in the Service
 * chain's rule: the update of the table-wide set (the endpoint's set's timeout on the
 * element), then the DNAT, in the chain's order.
 */
function endpointWork(rules: string[], timeouts: Map<string, number>): string {
  return rules
    .map((rule) => {
      const update = /^update @(affinity-\S+) \{ (ip6? saddr) \}$/.exec(rule);
      return update ? `update @affinity { ${tableWideKey(update[1], update[2])} timeout ${timeouts.get(update[1])}s }` : rule;
    })
    .join(' ');
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

/** fast-load's draw-map elements: by map and key, the verdict. */
function drawMapElements(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^add element ip6? kube-proxy (affinity-draw-\S+) \{ (\d+) : (goto \S+) \}$/gm)) out.set(`${m[1]} ${m[2]}`, m[3]);
  return out;
}

/**
 * Everything outside the chains is the same, but the per-endpoint affinity sets (one
 * table-wide set), the endpoint maps with their elements and the masquerade sets, which
 * are fast-load's own; the dispatch elements are compared by expectDispatch.
 */
export function expectSameOutsideChains({ kp, fl }: Compared): void {
  const outside = (t: string) => t.split('\n').filter((l) => !l.startsWith('\t\t') && !/^\t(chain|\})/.test(l));
  expect(affinityTimeouts(kp).size).toBeGreaterThan(40);
  const expected = outside(kp).filter((l) => !l.startsWith('\tset affinity-'));
  const tableWide = `\tset affinity { typeof ip saddr . numgen random mod 1 . numgen random mod 1 ; size ${AFFINITY_SET_SIZE} ; flags dynamic,timeout ; timeout 10800s ; }`;
  expected.splice(outside(kp).findIndex((l) => l.startsWith('\tset affinity-')), 0, tableWide);
  const isDispatch = (l: string) => /^add element ip6? kube-proxy (service-ips|service-nodeports|firewall-ips) /.test(l);
  const fastLoadOwn = /^(\tmap |add element ip6? kube-proxy )(endpoints|endpoint-ips|affinity-draw|service-endpoints|nodeport-endpoints|service-local-endpoints|nodeport-local-endpoints)-/;
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
 * kube-proxy's policy chains with affinity and one endpoint: a lone `goto` in fast-load,
 * which has none, and sends what went to it to its endpoint chain (kube-proxy's: the lookup
 * and the draw among one, both to that chain). By policy chain, the endpoint chain.
 */
export function passedThroughChains({ a }: Compared): Map<string, string> {
  const passedThrough = new Map<string, string>();
  for (const [name, rules] of a) {
    const lookup = /^ip6? saddr @affinity-\S+ goto (\S+)$/.exec(rules[0] ?? '');
    if (lookup && rules.length === 2 && rules[1] === `numgen random mod 1 vmap { 0 : goto ${lookup[1]} }`) passedThrough.set(name, lookup[1]);
  }
  return passedThrough;
}

/**
 * A Local-policy port's policy chains that fast-load does in the external chain's own rules
 * (local-policy.ts): each `goto P` of kube-proxy's external chain is fast-load's rule with
 * P's DNAT in its place, the same DNAT wherever P is gone to (checked as P's own rule by
 * expectChainRules). By policy chain, its DNAT.
 */
export function inlinedPolicies({ a, b }: Compared, passedThrough: Map<string, string>): Map<string, string> {
  const inlined = new Map<string, string>();
  for (const [name, rules] of a) {
    if (!name.startsWith('external-') || !b.has(name)) continue;
    const flRules = b.get(name)!;
    expect(flRules.length, name).toBe(rules.length);
    rules.forEach((r, i) => {
      const to = /goto ((?:service|local)-\S+)/.exec(r)?.[1];
      if (!to || b.has(to) || passedThrough.has(to)) return;
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
  passedThrough: Map<string, string>;
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
export function expectDispatch(c: Compared, passedThrough: Map<string, string>, draws: Map<string, number>): DispatchFacts {
  const x: DispatchContext = {
    c,
    passedThrough,
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
    if (to === d.target || to === passedThrough.get(d.target)) continue;
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
 * policy chain (or its endpoint chain), the services chain having marked the destination, a
 * member of the masquerade set of its kind. False when the element is not of this form.
 */
function markedExternal(x: DispatchContext, { family, set, key, target }: Dispatch, to: string): boolean {
  const external = x.c.a.get(target)!;
  const policyOf = /^goto (service-\S+)$/.exec(external[1] ?? '')?.[1];
  if (external.length !== 2 || external[0] !== MARK || !policyOf || (to !== policyOf && to !== x.passedThrough.get(policyOf))) return false;
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
  passedThrough: Map<string, string>;
  inlined: Map<string, string>;
}

/**
 * fast-load has kube-proxy's chains, in its order, but the endpoint chains of Services
 * without affinity and the chains it does in other forms; and beside them only its shared
 * chains, the ClusterIP draw chain and one firewall chain per list of sources.
 */
export function expectSameChains(c: Compared, o: OtherForms): void {
  const { a, b } = c;
  const own = (n: string) =>
    (!n.startsWith('endpoint-') || withAffinity(c, n)) && !o.replaced.has(n) && !o.markedExternals.has(n) && !isFirewall(n) && !o.passedThrough.has(n) && !o.inlined.has(n);
  expect([...b.keys()].filter((n) => LOCAL_SHARED_CHAIN.test(n)).sort()).toEqual([...o.localShared].sort());
  expect([...b.keys()].filter((n) => !SHARED_CHAIN.test(n) && !LOCAL_SHARED_CHAIN.test(n) && n !== CLUSTER_IP_DNAT_CHAIN && !isFirewall(n))).toEqual([...a.keys()].filter(own));
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
  draws: Map<string, string>;
  sharedFirewall: Map<string, string>;
  counts: ChainCounts;
  bases: Set<string>;
  keysSeen: string[];
  drawCount: number;
}

/**
 * Every chain of kube-proxy's that fast-load keeps has its rules, but the endpoint choice
 * (a draw from a table-wide map), the affinity state (the table-wide set) and the source
 * ranges (one chain per list); and every element of fast-load's endpoint and draw maps
 * belongs to one such chain's draw.
 */
export function expectChainRules(c: Compared, o: OtherForms, sharedFirewall: Map<string, string>): ChainCounts {
  const x: RulesContext = {
    c,
    timeouts: affinityTimeouts(c.kp),
    elements: endpointMapElements(c.fl),
    draws: drawMapElements(c.fl),
    sharedFirewall,
    counts: { affinity: 0, maps: 0, firewalls: 0 },
    bases: new Set(),
    keysSeen: [],
    drawCount: 0,
  };
  const throughGotos = (r: string) =>
    r.replace(/goto (\S+)/g, (all, to: string) => (o.passedThrough.has(to) ? `goto ${o.passedThrough.get(to)}` : (o.inlined.get(to) ?? all)));
  for (const [name, kpRules] of c.a) {
    // An inlined cluster chain whose ClusterIP is drawn was checked as shared, and its DNAT here.
    if ((o.replaced.has(name) && !o.inlined.has(name)) || o.markedExternals.has(name) || name === 'services' || o.passedThrough.has(name)) continue;
    if (name.startsWith('endpoint-')) {
      // An endpoint chain of a Service with affinity is its work in one rule: the update
      // of the table-wide set (the endpoint's set's timeout on the element), then the DNAT.
      if (withAffinity(c, name)) expect(c.b.get(name)).toEqual([endpointWork(kpRules, x.timeouts)]);
      continue;
    }
    const flRules = o.inlined.has(name) ? [o.inlined.get(name)!] : c.b.get(name)!;
    const last = kpRules[kpRules.length - 1] ?? '';
    const vmap = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(last);
    const dnatMap = POLICY_DNAT.exec(last);
    if (vmap) expectAffinityChain(x, kpRules, flRules, vmap);
    else if (dnatMap) expectEndpointMapChain(x, name, flRules, dnatMap);
    else if (isFirewall(name)) expectFirewallChain(x, name, kpRules);
    else expect(flRules).toEqual(kpRules.map(throughGotos));
  }
  // Every element of an endpoint map belongs to one policy chain's rule.
  expect(new Set(x.keysSeen).size).toBe(x.keysSeen.length);
  expect(x.keysSeen.length).toBe(x.elements.size);
  // Every element of a draw map belongs to one Service chain's draw.
  expect(x.drawCount).toBe(x.draws.size);
  expect(x.drawCount).toBeGreaterThan(40);
  expect(x.bases).toContain('first');
  return x.counts;
}

/**
 * A policy chain with affinity: the lookups, in kube-proxy's order (the table-wide twin of
 * each endpoint's set, then to the same endpoint chain), then the draw: draw i of N (each
 * 1/N) finds kube-proxy's element i, its chain.
 */
function expectAffinityChain(x: RulesContext, kpRules: string[], flRules: string[], vmap: RegExpExecArray): void {
  x.counts.affinity++;
  const lookups = kpRules.slice(0, -1).map((r) => {
    const m = /^(ip6? saddr) @(affinity-\S+) goto (\S+)$/.exec(r)!;
    return `${tableWideKey(m[2], m[1])} @affinity goto ${m[3]}`;
  });
  expect(lookups.length).toBe(Number(vmap[1]));
  // With one endpoint the lookup goes where the draw does: fast-load has the draw alone.
  const flLookups = lookups.length === 1 ? [] : lookups;
  expect(flRules.slice(0, flLookups.length)).toEqual(flLookups);
  const targets = vmap[2].split(' , ').map((e) => e.replace(/^\d+ : goto /, ''));
  const drawRule = flRules.slice(flLookups.length);
  expect(drawRule).toHaveLength(1);
  if (targets.length === 1) return expect(drawRule).toEqual([`goto ${targets[0]}`]);
  const m = /^numgen random mod (\d+) offset (\d+) vmap @(affinity-draw-[0-9a-f]{2})$/.exec(drawRule[0]);
  expect(m, drawRule[0]).not.toBeNull();
  expect(Number(m![1])).toBe(targets.length);
  expect(targets.map((_, i) => x.draws.get(`${m![3]} ${Number(m![2]) + i}`))).toEqual(targets.map((t) => `goto ${t}`));
  x.drawCount += targets.length;
}

/**
 * A policy chain without affinity: kube-proxy's elements, `A . P`, in an endpoint map where
 * draw i (of N, each 1/N) finds element i (its address alone when all are on one port).
 */
function expectEndpointMapChain(x: RulesContext, name: string, flRules: string[], dnatMap: RegExpExecArray): void {
  x.counts.maps++;
  const [, proto, family, n, entries] = dnatMap;
  const want = mapEntries(entries);
  const ports = new Set(want.map((e) => e.split(' . ')[1]));
  // Endpoints on one port: a map of addresses, the port in the rule; else addresses and ports.
  const onePort = ports.size === 1 ? [...ports][0] : undefined;
  const slot = endpointMapSlot(name, want.map((e) => ({ port: Number(e.split(' . ')[1]) }) as Endpoint), proto as 'tcp');
  expect(slot.map).toMatch(onePort !== undefined ? /^endpoint-ips-[0-9a-f]{2}$/ : new RegExp(`^endpoints-${proto}-[0-9a-f]{2}$`));
  const head = onePort !== undefined ? `dnat to` : `dnat ${family ?? ''}addr \\. port to`;
  const tail = onePort !== undefined ? `:${onePort}` : '';
  const rule = new RegExp(`^meta l4proto ${proto} ${head} numgen random mod ${n} offset (\\d+) map @${slot.map}${tail}$`).exec(flRules.join('\n'));
  expect(rule, flRules.join('\n')).not.toBeNull();
  const base = Number(rule![1]);
  x.bases.add(base === slot.bases(0) ? 'first' : 'probed');
  const inMap = onePort !== undefined ? want.map((e) => e.split(' . ')[0]) : want;
  expect(want.map((_, i) => x.elements.get(`${slot.map} ${base + i}`))).toEqual(inMap);
  want.forEach((_, i) => x.keysSeen.push(`${slot.map} ${base + i}`));
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
