// The fast-load layout against kube-proxy's, compiled from the same cluster: the same
// chains in the same order but the endpoint chains and the chains of Service ports that
// share fast-load's DNAT chains, every rule the same but the endpoint choice, the affinity
// state and the source ranges, and those choosing the same endpoints with the same
// probabilities, in the same order, and checking the same ranges.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterObjects, makeCluster, renderSnapshot } from '../../../scripts/gen-snapshot.mjs';
import { AFFINITY_SET_SIZE, affinityConstants } from '../../../src/backends/nftables/fast-load/affinity.js';
import { endpointMapSlot } from '../../../src/backends/nftables/fast-load/endpoint-map.js';
import { claimRange } from '../../../src/backends/nftables/fast-load/key-ranges.js';
import { CLUSTER_IP_DNAT_CHAIN, drawBase } from '../../../src/backends/nftables/fast-load/shared-dnat.js';
import type { Endpoint } from '../../../src/model/types.js';
import { statementsBuilder } from '../../../src/nft/ruleset.js';
import { uniformChoice } from '../../../src/backends/nftables/fast-load/selection.js';
import { kproxc } from '../../helpers/kproxc.js';
import { flatElements } from '../../helpers/nested-text.js';

/** Each chain's rule lines, by name, in the order printed. */
function chains(text: string): Map<string, string[]> {
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

/**
 * The probability with which a run of fast-load's uniform-choice rules takes each action:
 * `numgen random mod K 0 ACTION` (a new draw each), the last one `ACTION` alone.
 */
function choiceOdds(rules: string[]): Map<string, number> {
  const odds = new Map<string, number>();
  let reach = 1;
  for (const r of rules) {
    const m = /^numgen random mod (\d+) 0 (.+)$/.exec(r);
    const action = m ? m[2] : r;
    const p = m ? reach / Number(m[1]) : reach;
    odds.set(action, (odds.get(action) ?? 0) + p);
    reach -= p;
  }
  expect(reach).toBeCloseTo(0, 12);
  return odds;
}

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

const SHARED_CHAIN = /^dnat-(external-|nodeport-)?(tcp|udp|sctp)-(\d+)$/;
const LOCAL_SHARED_CHAIN = /^dnat-local-(external|nodeport)-(tcp|udp|sctp)-(\d+)-(\d+)$/;

/** fast-load's draw-map elements: by map and key, the verdict. */
function drawMapElements(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^add element ip6? kube-proxy (affinity-draw-\S+) \{ (\d+) : (goto \S+) \}$/gm)) out.set(`${m[1]} ${m[2]}`, m[3]);
  return out;
}

async function compile(yaml: string, layout: string, format = 'text', version = '1.35'): Promise<string> {
  const r = await kproxc(['compile', '--layout', layout, '--format', format, '--kube-proxy-version', version, '-'], yaml);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  // fast-load's text adds each set's elements in one command: read here one per line.
  return layout === 'fast-load' && format === 'text' ? flatElements(r.stdout) : r.stdout;
}

describe('fast-load endpoint choice', () => {
  it('gives every endpoint 1/N, for N = 1..20', () => {
    for (let n = 1; n <= 20; n++) {
      const targets = Array.from({ length: n }, (_, i) => `e${i}`);
      const rules = uniformChoice(targets);
      expect(rules).toHaveLength(n);
      const text = rules.map((stmts) =>
        stmts.map((s) => (s.t === 'match' && s.left.t === 'numgen' ? `numgen random mod ${s.left.mod} 0` : s.t === 'verdict' && 'target' in s.v ? `goto ${s.v.target}` : '?')).join(' '),
      );
      const odds = choiceOdds(text);
      expect([...odds.keys()]).toEqual(targets.map((t) => `goto ${t}`));
      for (const p of odds.values()) expect(p).toBeCloseTo(1 / n, 12);
    }
  });
});

describe('compile --layout fast-load', () => {
  const yamlOf = (endpoints: number) => renderSnapshot(clusterObjects(makeCluster(200, { endpoints, mixed: true })), 'yaml');
  const yaml = yamlOf(10);

  // With 10 endpoints a Service every port keeps its own chains; with 2 the ports with few
  // destinations share the DNAT chains (shared-dnat.ts), the others keep theirs.
  it.each([10, 2])('keeps every chain and rule of kube-proxy 1.36 but the endpoint choice, the affinity state and the source ranges (%i endpoints a Service)', async (endpoints) => {
    const snapshot = yamlOf(endpoints);
    // fast-load's text is kube-proxy 1.36's table (hairpin set, inline mark) with endpoint maps.
    const kp = await compile(snapshot, 'kube-proxy', 'text', '1.36');
    const fl = await compile(snapshot, 'fast-load', 'text', '1.36');
    // Everything outside the chains is the same, but the per-endpoint affinity sets (one
    // table-wide set) and the endpoint maps with their elements, which are fast-load's own.
    const outside = (t: string) => t.split('\n').filter((l) => !l.startsWith('\t\t') && !/^\t(chain|\})/.test(l));
    const timeouts = affinityTimeouts(kp);
    expect(timeouts.size).toBeGreaterThan(40);
    const expected = outside(kp).filter((l) => !l.startsWith('\tset affinity-'));
    const tableWide = `\tset affinity { typeof ip saddr . numgen random mod 1 . numgen random mod 1 ; size ${AFFINITY_SET_SIZE} ; flags dynamic,timeout ; timeout 10800s ; }`;
    expected.splice(outside(kp).findIndex((l) => l.startsWith('\tset affinity-')), 0, tableWide);
    // The dispatch elements are compared below: a shared chain stands for a port's own.
    const isDispatch = (l: string) => /^add element ip6? kube-proxy (service-ips|service-nodeports|firewall-ips) /.test(l);
    const fastLoadOwn = /^(\tmap |add element ip6? kube-proxy )(endpoints|endpoint-ips|affinity-draw|service-endpoints|nodeport-endpoints|service-local-endpoints|nodeport-local-endpoints)-/;
    const masqueradeSets = /^(\tset |add element ip6? kube-proxy )masquerade-(service-ips|nodeports) /;
    expect(outside(fl).filter((l) => !fastLoadOwn.test(l) && !masqueradeSets.test(l) && !isDispatch(l))).toEqual(expected.filter((l) => !isDispatch(l)));
    const a = chains(kp);
    const b = chains(fl);
    // The services chain marks the masquerade sets' destinations before each map, and tries
    // the ClusterIP draws after the map, before NodePorts.
    const services = a.get('services')!;
    const vmapAt = services.indexOf('ip daddr . meta l4proto . th dport vmap @service-ips');
    const nodePorts = services[vmapAt + 1];
    expect(services).toHaveLength(vmapAt + 2);
    expect(b.get('services')).toEqual([
      ...services.slice(0, vmapAt),
      'ip daddr . meta l4proto . th dport @masquerade-service-ips mark set mark or 0x00004000',
      services[vmapAt],
      `ip daddr @cluster-ips jump ${CLUSTER_IP_DNAT_CHAIN}`,
      nodePorts.replace(' vmap @service-nodeports', ' @masquerade-nodeports mark set mark or 0x00004000'),
      nodePorts,
    ]);
    const marked = new Set([...fl.matchAll(/^add element (ip6?) kube-proxy (masquerade-(?:service-ips|nodeports)) \{ (.+) \}$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`));
    let markedSeen = 0;
    const localShared = new Set<string>();
    const seenDraws = new Set<string>();
    const markedExternals = new Set<string>();
    // Its rules, one for each protocol and endpoint count: draw i of N finds A . P . B+i.
    const clusterIPDraws = new Map<string, number>();
    for (const r of b.get(CLUSTER_IP_DNAT_CHAIN)!) {
      const m = /^dnat ip6? addr \. port to ip6? daddr \. (\w+) dport \. numgen random mod (\d+)(?: offset (\d+))? map @service-endpoints-\1$/.exec(r);
      expect(m, r).not.toBeNull();
      const n = Number(m![2]);
      expect(Number(m![3] ?? 0)).toBe(drawBase(n));
      expect(clusterIPDraws.has(`${m![1]} ${n}`)).toBe(false);
      clusterIPDraws.set(`${m![1]} ${n}`, drawBase(n));
    }
    // A Service port without affinity or Local policy has no chains of its own: its
    // dispatch elements go to the DNAT chains of its protocol and endpoint count, whose maps
    // hold kube-proxy's endpoints, in its order, for each destination of the port; its
    // ClusterIP has no dispatch element, and is found by the rules of dnat-cluster-ips.
    // A policy chain with affinity and one endpoint is a lone `goto` in fast-load: it has
    // none, and what went to it goes to its endpoint chain (kube-proxy's: the lookup and the
    // draw among one, both to that chain).
    const passedThrough = new Map<string, string>();
    for (const [name, rules] of a) {
      const lookup = /^ip6? saddr @affinity-\S+ goto (\S+)$/.exec(rules[0] ?? '');
      if (lookup && rules.length === 2 && rules[1] === `numgen random mod 1 vmap { 0 : goto ${lookup[1]} }`) passedThrough.set(name, lookup[1]);
    }
    if (endpoints === 10) expect(passedThrough.size).toBeGreaterThan(0);
    // A Local-policy port's policy chains that fast-load does in the external chain's own
    // rules (local-policy.ts): each `goto P` of kube-proxy's external chain is fast-load's
    // rule with P's DNAT in its place, the same DNAT wherever P is gone to (checked as P's
    // own rule below).
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
    // With 2 endpoints every Local-policy port's external chain is shared (below).
    if (endpoints === 10) expect(inlined.size).toBeGreaterThan(10);
    const throughGotos = (r: string) =>
      r.replace(/goto (\S+)/g, (all, c: string) => (passedThrough.has(c) ? `goto ${passedThrough.get(c)}` : (inlined.get(c) ?? all)));
    const kpDispatch = dispatchElements(kp);
    const flDispatch = new Map(dispatchElements(fl).map((d) => [`${d.family} ${d.set} ${d.key}`, d.target]));
    const shared = sharedMapElements(fl);
    const replaced = new Set<string>();
    let sharedSeen = 0;
    let clusterIPsDrawn = 0;
    kpDispatch.forEach(({ family, set, key, target }) => {
      const id = `${family} ${set} ${key}`;
      const to = flDispatch.get(id) ?? CLUSTER_IP_DNAT_CHAIN;
      flDispatch.delete(id);
      if (to === target || to === passedThrough.get(target)) return;
      // kube-proxy's external chain that marks and goes to the policy chain: fast-load goes
      // to the policy chain (or its endpoint chain), the services chain having marked the
      // destination, a member of the masquerade set of its kind.
      const external = a.get(target)!;
      const policyOf = /^goto (service-\S+)$/.exec(external[1] ?? '')?.[1];
      if (external.length === 2 && external[0] === 'mark set mark or 0x00004000' && policyOf && (to === policyOf || to === passedThrough.get(policyOf))) {
        const member = `${family} masquerade-${set === 'service-ips' ? 'service-ips' : 'nodeports'} ${key}`;
        expect(marked.has(member), member).toBe(true);
        markedSeen++;
        markedExternals.add(target);
        return;
      }
      // A Local-policy port's external chain shared by the ports of its counts: kube-proxy's
      // rules, each `goto` a policy chain replaced by the draw among that chain's endpoints
      // keyed by the destination; the maps hold them for this destination, in its order.
      const local = LOCAL_SHARED_CHAIN.exec(to);
      if (local) {
        const [, kind, proto, c, l] = local;
        expect(kind === 'nodeport').toBe(set === 'service-nodeports');
        const parts = key.split(' . ');
        const destination = set === 'service-nodeports' ? parts[1] : `${parts[0]} . ${parts[2]}`;
        const sharedRules = b.get(to)!;
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
          const want = /map \{ (.*) \}$/.exec(a.get(policy)![0])![1].split(' , ').map((e) => e.replace(/^\d+ : /, ''));
          expect(want.map((_, j) => shared.get(`${family} ${map} ${destination} . ${base + j}`))).toEqual(want);
          if (!seenDraws.has(`${family} ${map} ${destination}`)) sharedSeen += want.length;
          seenDraws.add(`${family} ${map} ${destination}`);
          if (isLocal) replaced.add(policy);
        });
        localShared.add(to);
        replaced.add(target);
        return;
      }
      // kube-proxy's path: the external chain (mark, then the policy chain), or the policy chain.
      let policy = target;
      let kind = '';
      if (to === CLUSTER_IP_DNAT_CHAIN) {
        expect(set, key).toBe('service-ips');
        expect(target, key).toMatch(/^service-/);
        clusterIPsDrawn++;
      } else {
        const m = SHARED_CHAIN.exec(to);
        expect(m, `${key}: ${to}`).not.toBeNull();
        kind = m![1] ?? '';
        expect(kind === 'nodeport-').toBe(set === 'service-nodeports');
      }
      if (kind) {
        const external = a.get(target)!;
        expect(external).toEqual(['mark set mark or 0x00004000', expect.stringMatching(/^goto service-/)]);
        policy = external[1].slice('goto '.length);
        replaced.add(target);
      }
      replaced.add(policy);
      const rules = a.get(policy)!;
      expect(rules).toHaveLength(1);
      const dnat = /^meta l4proto (\w+) dnat (ip6? )?addr \. port to numgen random mod (\d+) map \{ (.*) \}$/.exec(rules[0]);
      expect(dnat, rules[0]).not.toBeNull();
      const want = dnat![4].split(' , ').map((e) => e.replace(/^\d+ : /, ''));
      const proto = dnat![1];
      if (to !== CLUSTER_IP_DNAT_CHAIN) expect([proto, String(want.length)]).toEqual([SHARED_CHAIN.exec(to)![2], SHARED_CHAIN.exec(to)![3]]);
      // `A . PROTO . P` is found as `A . P . B+i`; the NodePort's `PROTO . N` as `N . i`.
      const parts = key.split(' . ');
      const [map, destination, base] =
        set === 'service-nodeports'
          ? [`nodeport-endpoints-${proto}`, parts[1], 0]
          : [`service-endpoints-${proto}`, `${parts[0]} . ${parts[2]}`, clusterIPDraws.get(`${proto} ${want.length}`)];
      if (set === 'service-ips') expect(base, `${key}: no rule draws among ${want.length}`).toBe(drawBase(want.length));
      // Draw i of N (each 1/N) finds kube-proxy's endpoint i.
      expect(want.map((_, j) => shared.get(`${family} ${map} ${destination} . ${base! + j}`))).toEqual(want);
      sharedSeen += want.length;
    });
    // fast-load has no dispatch element kube-proxy's table lacks, and marks no other destination.
    expect([...flDispatch.keys()]).toEqual([]);
    expect(markedSeen).toBe(marked.size);
    expect(markedSeen).toBeGreaterThan(endpoints === 10 ? 40 : 10);
    if (endpoints === 10) expect([replaced.size, clusterIPsDrawn]).toEqual([0, 0]);
    else {
      expect(replaced.size).toBeGreaterThan(100);
      expect(clusterIPsDrawn).toBeGreaterThan(50);
    }
    // Every element of the shared maps is one destination's draw (checked above).
    expect(sharedSeen).toBe(shared.size);
    const sharedChains = [...b.keys()].filter((n) => SHARED_CHAIN.test(n));
    if (endpoints !== 10) {
      expect(sharedChains.length).toBeGreaterThan(0);
      expect(clusterIPDraws.size).toBeGreaterThan(0);
    }
    for (const name of sharedChains) {
      const [, kind, proto, n] = SHARED_CHAIN.exec(name)!;
      const mark = 'mark set mark or 0x00004000';
      const offset = drawBase(Number(n)) ? ` offset ${drawBase(Number(n))}` : '';
      expect(kind).toMatch(/^(external|nodeport)-$/);
      if (kind === 'external-') expect(b.get(name)).toEqual([mark, `dnat ip addr . port to ip daddr . ${proto} dport . numgen random mod ${n}${offset} map @service-endpoints-${proto}`]);
      else expect(b.get(name)).toEqual([mark, `dnat ip addr . port to ${proto} dport . numgen random mod ${n} map @nodeport-endpoints-${proto}`]);
    }
    // Endpoint chains only for the Services with affinity, in kube-proxy's order.
    const withAffinity = (n: string) => a.get(n)!.some((r) => r.startsWith('update @affinity-'));
    const endpointChains = [...a.keys()].filter((n) => n.startsWith('endpoint-'));
    expect(endpointChains.length).toBeGreaterThan(40);
    expect(endpointChains.filter(withAffinity).length).toBeGreaterThan(40);
    // Firewall chains are compared below: one per list of allowed sources stands for the ports'.
    const isFirewall = (n: string) => n.startsWith('firewall-') && n !== 'firewall-check';
    const own = (n: string) =>
      (!n.startsWith('endpoint-') || withAffinity(n)) && !replaced.has(n) && !markedExternals.has(n) && !isFirewall(n) && !passedThrough.has(n) && !inlined.has(n);
    // With 10 endpoints no Local-policy port shares; with 2 they do.
    if (endpoints !== 10) expect(localShared.size).toBeGreaterThan(0);
    expect([...b.keys()].filter((n) => LOCAL_SHARED_CHAIN.test(n)).sort()).toEqual([...localShared].sort());
    expect([...b.keys()].filter((n) => !SHARED_CHAIN.test(n) && !LOCAL_SHARED_CHAIN.test(n) && n !== CLUSTER_IP_DNAT_CHAIN && !isFirewall(n))).toEqual([...a.keys()].filter(own));
    // Each load-balancer IP's firewall element: kube-proxy's goes to the port's chain, fast-load's to its sources' chain.
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
    // Exactly one chain for each list of sources: as many as kube-proxy's chains have contents.
    const flFirewallChains = [...b.keys()].filter(isFirewall);
    expect(new Set(sharedFirewall.values()).size).toBe(flFirewallChains.length);
    expect(flFirewallChains.length).toBe(new Set([...sharedFirewall.keys()].map((n) => a.get(n)!.join('\n'))).size);
    expect(flFirewallChains.length).toBeLessThan(sharedFirewall.size);
    const elements = endpointMapElements(fl);
    const draws = drawMapElements(fl);
    const counts = { affinity: 0, maps: 0, firewalls: 0 };
    const bases = new Set<string>();
    const keysSeen: string[] = [];
    let drawCount = 0;
    for (const [name, kpRules] of a) {
      // An inlined cluster chain whose ClusterIP is drawn was checked as shared above, and its DNAT here.
      if ((replaced.has(name) && !inlined.has(name)) || markedExternals.has(name) || name === 'services' || passedThrough.has(name)) continue;
      if (name.startsWith('endpoint-')) {
        // An endpoint chain of a Service with affinity is its work in one rule: the update
        // of the table-wide set (the endpoint's set's timeout on the element), then the DNAT.
        if (withAffinity(name)) expect(b.get(name)).toEqual([endpointWork(kpRules, timeouts)]);
        continue;
      }
      const flRules = inlined.has(name) ? [inlined.get(name)!] : b.get(name)!;
      const last = kpRules[kpRules.length - 1] ?? '';
      const vmap = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(last);
      const dnatMap = /^meta l4proto (\w+) dnat (ip6? )?addr \. port to numgen random mod (\d+) map \{ (.*) \}$/.exec(last);
      if (vmap) {
        counts.affinity++;
        // The lookups, in kube-proxy's order: the table-wide twin of each endpoint's set, then
        // to the same endpoint chain.
        const lookups = kpRules.slice(0, -1).map((r) => {
          const m = /^(ip6? saddr) @(affinity-\S+) goto (\S+)$/.exec(r)!;
          return `${tableWideKey(m[2], m[1])} @affinity goto ${m[3]}`;
        });
        expect(lookups.length).toBe(Number(vmap[1]));
        // With one endpoint the lookup goes where the draw does: fast-load has the draw alone.
        const flLookups = lookups.length === 1 ? [] : lookups;
        expect(flRules.slice(0, flLookups.length)).toEqual(flLookups);
        // Then the draw: draw i of N (each 1/N) finds kube-proxy's element i, its chain.
        const targets = vmap[2].split(' , ').map((e) => e.replace(/^\d+ : goto /, ''));
        const drawRule = flRules.slice(flLookups.length);
        expect(drawRule).toHaveLength(1);
        if (targets.length === 1) expect(drawRule).toEqual([`goto ${targets[0]}`]);
        else {
          const m = /^numgen random mod (\d+) offset (\d+) vmap @(affinity-draw-[0-9a-f]{2})$/.exec(drawRule[0]);
          expect(m, drawRule[0]).not.toBeNull();
          expect(Number(m![1])).toBe(targets.length);
          expect(targets.map((_, i) => draws.get(`${m![3]} ${Number(m![2]) + i}`))).toEqual(targets.map((t) => `goto ${t}`));
          drawCount += targets.length;
        }
      } else if (dnatMap) {
        counts.maps++;
        const [, proto, family, n, entries] = dnatMap;
        // kube-proxy's elements, `A . P`: draw i (of N, each 1/N) finds element i.
        const want = entries.split(' , ').map((e) => e.replace(/^\d+ : /, ''));
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
        bases.add(base === slot.bases(0) ? 'first' : 'probed');
        // The entry set: draw i finds kube-proxy's element i at B + i (its address alone on one port).
        const inMap = onePort !== undefined ? want.map((e) => e.split(' . ')[0]) : want;
        expect(want.map((_, i) => elements.get(`${slot.map} ${base + i}`))).toEqual(inMap);
        want.forEach((_, i) => keysSeen.push(`${slot.map} ${base + i}`));
      } else if (isFirewall(name)) {
        counts.firewalls++;
        const m = /^ip saddr != (?:\{ (.*) \}|(\S+)) drop$/.exec(kpRules[0]);
        expect(kpRules).toHaveLength(1);
        const ranges = m![1] ? m![1].split(' , ') : [m![2]];
        expect(b.get(sharedFirewall.get(name)!)).toEqual([...ranges.map((r) => `ip saddr ${r} return`), 'drop']);
      } else {
        expect(flRules).toEqual(kpRules.map(throughGotos));
      }
    }
    expect(counts.affinity).toBeGreaterThan(20);
    // The Local-policy ports with their own external chain: the cluster and the local chain
    // each draw from an endpoint map (fewer with 2 endpoints, where most share one).
    expect(counts.maps).toBeGreaterThan(endpoints === 10 ? 20 : 10);
    expect(counts.firewalls).toBe(20);
    // Every element of an endpoint map belongs to one policy chain's rule (checked above).
    expect(new Set(keysSeen).size).toBe(keysSeen.length);
    // Every element of a draw map belongs to one Service chain's draw (checked above).
    expect(drawCount).toBe(draws.size);
    expect(drawCount).toBeGreaterThan(40);
    expect(keysSeen.length).toBe(elements.size);
    expect(bases).toContain('first');
    // No anonymous set is left in a Service's chains.
    for (const [name, rules] of b) {
      if (name !== 'cluster-ips-check') for (const r of rules) expect(r.replace(/update @affinity \{ [^}]* \}/g, '')).not.toContain('{ ');
    }
  });

  it('keeps kube-proxy\'s per-endpoint affinity sets in JSON, which cannot declare the table-wide one', async () => {
    const kp = JSON.parse(await compile(yaml, 'kube-proxy', 'json')) as { nftables: { add?: { set?: { name: string } } }[] };
    const fl = JSON.parse(await compile(yaml, 'fast-load', 'json')) as typeof kp;
    const sets = (j: typeof kp) => j.nftables.flatMap((c) => (c.add?.set ? [c.add.set] : []));
    expect(sets(fl)).toEqual(sets(kp));
    expect(sets(fl).filter((s) => s.name.startsWith('affinity-')).length).toBeGreaterThan(100);
  });

  it('leaves kube-proxy\'s layout as the default', async () => {
    const byDefault = await kproxc(['compile', '--kube-proxy-version', '1.35', '-'], yaml);
    expect(byDefault.stdout).toBe(await compile(yaml, 'kube-proxy'));
  });

  it('refuses --layout with the ovs backend', async () => {
    const r = await kproxc(['compile', '--backend', 'ovs', '--layout', 'fast-load', '-'], yaml);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--layout does not apply to --backend ovs');
  });
});

describe('endpoint map key ranges', () => {
  const builder = () => statementsBuilder({ family: 'ip', name: 'kube-proxy' });
  // Candidate bases by probe number, as a chain's hashes would give them.
  const candidates = (...bs: number[]) => (probe: number) => bs[Math.min(probe, bs.length - 1)];

  it('gives a chain its first base when its range meets no other, in any map', () => {
    const b = builder();
    expect(claimRange(b, 'm1', 'a', 10, candidates(100))).toBe(100);
    expect(claimRange(b, 'm1', 'b', 5, candidates(110))).toBe(110);
    expect(claimRange(b, 'm2', 'c', 10, candidates(100))).toBe(100);
  });

  it('moves the later chain to its next base when the ranges overlap, however little', () => {
    const b = builder();
    expect(claimRange(b, 'm', 'a', 10, candidates(100))).toBe(100);
    expect(claimRange(b, 'm', 'b', 3, candidates(109, 500))).toBe(500);
    expect(claimRange(b, 'm', 'c', 10, candidates(91, 502, 700))).toBe(700);
    expect(claimRange(b, 'm', 'd', 1, candidates(99, 110))).toBe(99);
    expect(claimRange(b, 'm', 'e', 10, candidates(501, 710))).toBe(710);
  });

  it('finds a clash across the blocks a range spans, for ranges long and short', () => {
    const b = builder();
    expect(claimRange(b, 'm', 'a', 10, candidates(65_530))).toBe(65_530);
    expect(claimRange(b, 'm', 'b', 1, candidates(65_539, 70_000))).toBe(70_000);
    expect(claimRange(b, 'm', 'c', 200_000, candidates(0, 1_000_000))).toBe(1_000_000);
    expect(claimRange(b, 'm', 'd', 1, candidates(1_150_000, 1_200_000))).toBe(1_200_000);
    expect(claimRange(b, 'm', 'e', 1, candidates(65_529))).toBe(65_529);
  });

  it('stops with an internal error for a chain twice in a map, or with no free range', () => {
    const b = builder();
    claimRange(b, 'm', 'a', 10, candidates(100));
    expect(() => claimRange(b, 'm', 'a', 10, candidates(100))).toThrow(/twice/);
    expect(() => claimRange(b, 'm', 'z', 10, candidates(95))).toThrow(/no free key range/);
  });

  it('derives the first base from the chain name alone, below 2^31, and other bases from probes', () => {
    const onePort = [80, 80].map((port) => ({ port }) as Endpoint);
    const twoPorts = [80, 81].map((port) => ({ port }) as Endpoint);
    const s = endpointMapSlot('service-ABCDEFGH-ns/svc/tcp/http', onePort, 'tcp');
    expect(s.bases(0)).toBe(endpointMapSlot('service-ABCDEFGH-ns/svc/tcp/http', twoPorts, 'udp').bases(0));
    // The same shard of the address maps or of the protocol's maps of addresses and ports.
    expect(s.map).toMatch(/^endpoint-ips-[0-9a-f]{2}$/);
    expect(endpointMapSlot('service-ABCDEFGH-ns/svc/tcp/http', twoPorts, 'udp').map).toBe(s.map.replace('endpoint-ips', 'endpoints-udp'));
    const all = Array.from({ length: 8 }, (_, i) => s.bases(i));
    expect(new Set(all).size).toBe(8);
    for (const x of all) expect(x).toBeLessThan(2 ** 31);
  });
});

describe('which Service ports share the DNAT chains', () => {
  /** A cluster of one Service of `type` with `n` endpoints and `spec` added to its spec. */
  function oneService(type: string, n: number, spec = '', node = 'node-b'): string {
    const endpoints = Array.from({ length: n }, (_, i) => `{addresses: [10.180.0.${i + 1}], nodeName: ${node}}`).join(', ');
    const nodePort = type === 'ClusterIP' ? '' : ', nodePort: 30080';
    const lb = type === 'LoadBalancer' ? '\nstatus: {loadBalancer: {ingress: [{ip: 192.168.60.13}]}}' : '';
    return `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: ns, name: web}
spec: {type: ${type}, clusterIP: 172.30.0.10, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080${nodePort}}]${spec}}${lb}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [${endpoints}]
ports: [{name: http, port: 8080, protocol: TCP}]
`;
  }
  const shares = async (yaml: string, n: number) => {
    const text = await compile(yaml, 'fast-load', 'text', '1.36');
    // The ClusterIP's draw among n in dnat-cluster-ips (every shape of Service has a ClusterIP).
    const shared = new RegExp(`^\\t\\tdnat ip addr \\. port to ip daddr \\. tcp dport \\. numgen random mod ${n}( offset \\d+)? map @service-endpoints-tcp$`, 'm').test(text);
    // A port that shares has no chain of its own; one that does not, no shared chain.
    expect(/^\tchain (service|local)-[A-Z0-9]{8}-/m.test(text)).toBe(!shared);
    return shared;
  };

  it('N x (2D - 1) <= 4C + 1: the ClusterIP alone up to 5 endpoints, with a NodePort up to 3, with a load-balancer IP too 1', async () => {
    const cases: [string, number, boolean][] = [
      ['ClusterIP', 1, true],
      ['ClusterIP', 5, true],
      ['ClusterIP', 6, false],
      ['NodePort', 3, true],
      ['NodePort', 4, false],
      ['LoadBalancer', 1, true],
      ['LoadBalancer', 2, false],
    ];
    for (const [type, n, want] of cases) expect(await shares(oneService(type, n), n), `${type} x ${n}`).toBe(want);
  });

  it('never with session affinity or a Local traffic policy', async () => {
    const affinity = ', sessionAffinity: ClientIP';
    // Two endpoints: with one, the port has no policy chain either (its elements go to the endpoint chain).
    expect(await shares(oneService('ClusterIP', 2, affinity), 2)).toBe(false);
    // The endpoint on this node, so that the Local policy chains have it.
    expect(await shares(oneService('ClusterIP', 1, ', internalTrafficPolicy: Local', 'node-a'), 1)).toBe(false);
    // Local external policy never takes the Cluster ports' chains; its own external chain
    // DNATs in place of both policy chains, or is shared by the Local ports of its counts
    // (local-policy.ts); with few endpoints its ClusterIP is drawn by dnat-cluster-ips.
    for (const n of [1, 2, 3]) {
      const text = await compile(oneService('NodePort', n, ', externalTrafficPolicy: Local', 'node-a'), 'fast-load', 'text', '1.36');
      expect(text).not.toMatch(/^\tchain (dnat-nodeport-|local-[A-Z0-9]{8}-)/m);
      expect(/^\tchain dnat-local-nodeport-tcp-/m.test(text), `${n}`).toBe(n < 3);
      expect(/^\tchain external-[A-Z0-9]{8}-/m.test(text), `${n}`).toBe(n === 3);
      expect(/^\tchain service-[A-Z0-9]{8}-/m.test(text), `${n}`).toBe(n === 3);
      expect(/^\t\tdnat ip addr \. port to ip daddr \. tcp dport/m.test(text), `${n}`).toBe(n < 3);
    }
  });

  it('Local external policy: the shared external chain while 3(C + L)D <= 2(4 + 3(R - 1) + C + L)', async () => {
    // C cluster and L local endpoints (the first L on this node), D external destinations
    // (the NodePort, a load-balancer IP, external IPs), R rules of its own external chain
    // (pod traffic, local traffic twice, the local endpoints).
    const form = async (c: number, l: number, externalIPs: number) => {
      const ips = Array.from({ length: externalIPs }, (_, i) => `192.168.99.${i + 1}`).join(', ');
      const spec = `, externalTrafficPolicy: Local${externalIPs ? `, externalIPs: [${ips}]` : ''}`;
      const yaml = oneService('LoadBalancer', c, spec, 'node-b').replace(/nodeName: node-b/g, (all, at: number, whole: string) => (whole.slice(0, at).split('nodeName').length - 1 < l ? 'nodeName: node-a' : all));
      const text = await compile(yaml, 'fast-load', 'text', '1.36');
      return /^\tchain dnat-local-external-/m.test(text) ? 'shared' : /^\tchain external-/m.test(text) ? 'own' : 'none';
    };
    // D = 2: C = L = 1: 12 <= 30; C = L = 2: 24 <= 34; C = 2, L = 0: 12 <= 24.
    expect(await form(1, 1, 0)).toBe('shared');
    expect(await form(2, 2, 0)).toBe('shared');
    expect(await form(2, 0, 0)).toBe('shared');
    // C = 2, L = 1: D = 3: 27 <= 32; D = 4: 36 > 32. C = 1, L = 1, D = 5: 30 <= 30.
    expect(await form(2, 1, 1)).toBe('shared');
    expect(await form(2, 1, 2)).toBe('own');
    expect(await form(1, 1, 3)).toBe('shared');
    expect(await form(1, 1, 4)).toBe('own');
    // Three endpoints: the cluster chain stays for the ClusterIP, and the external chain goes to it.
    expect(await form(3, 1, 0)).toBe('own');
  });
});

describe('firewall chains shared by the ports that allow the same sources', () => {
  const lb = (name: string, vip: string, ranges: string) => `---
apiVersion: v1
kind: Service
metadata: {namespace: ns, name: ${name}}
spec: {type: LoadBalancer, clusterIP: 172.30.0.${vip.split('.')[3]}, ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080, nodePort: 300${vip.split('.')[3]}}], loadBalancerSourceRanges: [${ranges}]}
status: {loadBalancer: {ingress: [{ip: ${vip}}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns, name: ${name}-1, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
endpoints: [{addresses: [10.180.0.${vip.split('.')[3]}], nodeName: node-b}]
ports: [{name: http, port: 8080, protocol: TCP}]
`;
  const yaml = `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
${lb('a', '192.168.60.11', '203.0.113.0/24, 198.51.100.0/24')}${lb('b', '192.168.60.12', '203.0.113.0/24, 198.51.100.0/24')}${lb('c', '192.168.60.13', '198.51.100.0/24, 203.0.113.0/24')}${lb('d', '192.168.60.14', '203.0.113.0/24')}`;

  it('one chain for a and b (the same sources, in the same order), one each for c (another order) and d', async () => {
    const text = await compile(yaml, 'fast-load', 'text', '1.36');
    const targets = new Map([...text.matchAll(/^add element ip kube-proxy firewall-ips \{ (192\.168\.60\.\d+) \. tcp \. 80 comment "[^"]*" : goto (\S+) \}$/gm)].map((m) => [m[1], m[2]]));
    expect([...targets.keys()]).toEqual(['192.168.60.11', '192.168.60.12', '192.168.60.13', '192.168.60.14']);
    const [a, b, c, d] = [...targets.values()];
    expect(a).toBe(b);
    expect(new Set([a, c, d]).size).toBe(3);
    expect([...text.matchAll(/^\tchain (firewall-sources-\S+) \{$/gm)].map((m) => m[1])).toEqual([a, c, d]);
    expect(text).toContain(`\tchain ${a} {\n\t\tip saddr 203.0.113.0/24 return\n\t\tip saddr 198.51.100.0/24 return\n\t\tdrop\n\t}`);
  });

  it('lets in and drops the sources kube-proxy\'s chains do, for every port', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-fw-'));
    try {
      const file = path.join(dir, 'cluster.yaml');
      fs.writeFileSync(file, yaml);
      let dropped = 0;
      for (const vip of ['192.168.60.11', '192.168.60.12', '192.168.60.13', '192.168.60.14']) {
        for (const src of ['203.0.113.9', '198.51.100.9', '192.0.2.9']) {
          const trace = async (layout: string) => {
            const r = await kproxc(['trace', file, '--layout', layout, '--kube-proxy-version', '1.36', '--src', src, '--dst', vip, '--dport', '80', '--json']);
            expect(r.code, r.stderr).toBe(0);
            const { verdict, endpoints, masquerade } = JSON.parse(r.stdout) as { verdict: string; endpoints: string[]; masquerade: boolean };
            return { verdict, endpoints, masquerade };
          };
          const kp = await trace('kube-proxy');
          expect(await trace('fast-load'), `${src} to ${vip}`).toEqual(kp);
          if (kp.verdict === 'drop') dropped++;
        }
      }
      // 192.0.2.9 everywhere, 198.51.100.9 at d.
      expect(dropped).toBe(5);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
