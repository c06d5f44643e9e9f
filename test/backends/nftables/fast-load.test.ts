// The fast-load layout against kube-proxy's, compiled from the same cluster: the same
// chains in the same order but the endpoint chains, every rule the same but the endpoint
// choice, the affinity state and the source ranges, and those choosing the same endpoints
// with the same probabilities, in the same order, and checking the same ranges.
import { describe, expect, it } from 'vitest';
import { clusterObjects, makeCluster, renderSnapshot } from '../../../scripts/gen-snapshot.mjs';
import { AFFINITY_SET_SIZE, affinityConstants } from '../../../src/backends/nftables/fast-load/affinity.js';
import { endpointMapSlot } from '../../../src/backends/nftables/fast-load/endpoint-map.js';
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

/** fast-load's endpoint-map elements: by map and constant, the values by draw. */
function endpointMapElements(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of text.matchAll(/^add element ip6? kube-proxy (endpoints-\S+) \{ (\d+) \. (\d+) : (\S+ \. \d+) \}$/gm)) {
    const k = `${m[1]} ${m[2]}`;
    const list = out.get(k) ?? [];
    list[Number(m[3])] = m[4];
    out.set(k, list);
  }
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
  const yaml = renderSnapshot(clusterObjects(makeCluster(200, { endpoints: 10, mixed: true })), 'yaml');

  it('keeps every chain and rule of kube-proxy 1.36 but the endpoint choice, the affinity state and the source ranges', async () => {
    // fast-load's text is kube-proxy 1.36's table (hairpin set, inline mark) with endpoint maps.
    const kp = await compile(yaml, 'kube-proxy', 'text', '1.36');
    const fl = await compile(yaml, 'fast-load', 'text', '1.36');
    // Everything outside the chains is the same, but the per-endpoint affinity sets (one
    // table-wide set) and the endpoint maps with their elements, which are fast-load's own.
    const outside = (t: string) => t.split('\n').filter((l) => !l.startsWith('\t\t') && !/^\t(chain|\})/.test(l));
    const timeouts = affinityTimeouts(kp);
    expect(timeouts.size).toBeGreaterThan(100);
    const expected = outside(kp).filter((l) => !l.startsWith('\tset affinity-'));
    const tableWide = `\tset affinity { typeof ip saddr . numgen random mod 1 . numgen random mod 1 ; size ${AFFINITY_SET_SIZE} ; flags dynamic,timeout ; timeout 10800s ; }`;
    expected.splice(outside(kp).findIndex((l) => l.startsWith('\tset affinity-')), 0, tableWide);
    expect(outside(fl).filter((l) => !/^(\tmap |add element ip6? kube-proxy )endpoints-/.test(l))).toEqual(expected);
    const a = chains(kp);
    const b = chains(fl);
    // No endpoint chain: those of the Services with affinity are folded into their rules.
    const endpointChains = [...a.keys()].filter((n) => n.startsWith('endpoint-'));
    expect(endpointChains.length).toBeGreaterThan(100);
    expect([...b.keys()]).toEqual([...a.keys()].filter((n) => !n.startsWith('endpoint-')));
    const elements = endpointMapElements(fl);
    const counts = { affinity: 0, maps: 0, firewalls: 0 };
    for (const [name, kpRules] of a) {
      if (name.startsWith('endpoint-')) continue;
      const flRules = b.get(name)!;
      const last = kpRules[kpRules.length - 1] ?? '';
      const vmap = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(last);
      const dnatMap = /^meta l4proto (\w+) dnat (ip6? )?addr \. port to numgen random mod (\d+) map \{ (.*) \}$/.exec(last);
      if (vmap) {
        counts.affinity++;
        const work = (chain: string) => endpointWork(a.get(chain)!, timeouts);
        // The lookups, in kube-proxy's order: each endpoint's set read, then its chain's work.
        const lookups = kpRules.slice(0, -1).map((r) => {
          const m = /^(ip6? saddr) @(affinity-\S+) goto (\S+)$/.exec(r)!;
          return `${tableWideKey(m[2], m[1])} @affinity ${work(m[3])}`;
        });
        expect(lookups.length).toBe(Number(vmap[1]));
        expect(flRules.slice(0, lookups.length)).toEqual(lookups);
        // Then the draw: each of kube-proxy's endpoints, in its order, with odds 1/N.
        const targets = vmap[2].split(' , ').map((e) => work(e.replace(/^\d+ : goto /, '')));
        const odds = choiceOdds(flRules.slice(lookups.length));
        expect([...odds.keys()]).toEqual(targets);
        for (const p of odds.values()) expect(p).toBeCloseTo(1 / targets.length, 12);
      } else if (dnatMap) {
        counts.maps++;
        const [, proto, family, n, entries] = dnatMap;
        const slot = endpointMapSlot(name, proto as 'tcp');
        expect(flRules).toEqual([`meta l4proto ${proto} dnat ${family ?? ''}addr . port to numgen random mod 1 offset ${slot.constant} . numgen random mod ${n} map @${slot.map}`]);
        // The entry set: draw i (of N, each 1/N) finds kube-proxy's element i, nothing else.
        expect(elements.get(`${slot.map} ${slot.constant}`)).toEqual(entries.split(' , ').map((e) => e.replace(/^\d+ : /, '')));
      } else if (name.startsWith('firewall-') && name !== 'firewall-check') {
        counts.firewalls++;
        const m = /^ip saddr != (?:\{ (.*) \}|(\S+)) drop$/.exec(kpRules[0]);
        expect(kpRules).toHaveLength(1);
        const ranges = m![1] ? m![1].split(' , ') : [m![2]];
        expect(flRules).toEqual([...ranges.map((r) => `ip saddr ${r} return`), 'drop']);
      } else {
        expect(flRules).toEqual(kpRules);
      }
    }
    expect(counts.affinity).toBeGreaterThan(20);
    expect(counts.maps).toBeGreaterThan(150);
    expect(counts.firewalls).toBe(20);
    // Every element of an endpoint map belongs to one policy chain's rule (checked above).
    expect([...elements.values()].reduce((n, l) => n + l.length, 0)).toBe(fl.split('\n').filter((l) => / kube-proxy endpoints-/.test(l) && l.startsWith('add element')).length);
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
