// The benchmark's map-only yardstick (scripts/map-only-table.mjs) is held to the cluster it
// is made from: each address a Service is reached on besides NodePorts (ClusterIP,
// load-balancer IP) draws among that Service's ready endpoints, in one map per protocol,
// through the one rule of its endpoint count; every endpoint is in the hairpin set. The
// bench system test loads it into real nft.
import { describe, expect, it } from 'vitest';
import { makeCluster } from '../../scripts/gen-snapshot.mjs';
import { mapOnlyTable } from '../../scripts/map-only-table.mjs';

/** The elements of `add element ... NAME { ... }` in the table's text. */
function elementsOf(text: string, name: string): string[] {
  const m = new RegExp(`^add element ip kproxc-map-only ${name} \\{\\n([^}]*)\\n\\}$`, 'm').exec(text);
  return m ? m[1].split(',\n').map((e) => e.trim()) : [];
}

describe('the map-only table', () => {
  const cluster = makeCluster(60, { endpoints: 4, mixed: true });
  const text = mapOnlyTable(cluster);

  it('maps each Service address, port and draw to the ready endpoints, in order', () => {
    const entries = new Map(elementsOf(text, 'endpoints-tcp').map((e) => e.split(' : ') as [string, string]));
    let expected = 0;
    for (const s of cluster.services) {
      const ready = s.endpoints.filter((e: { terminating?: boolean }) => !e.terminating);
      for (const addr of [s.clusterIP, ...(s.lbIP ? [s.lbIP] : [])]) {
        ready.forEach((e: { ip: string }, i: number) => expect(entries.get(`${addr} . 80 . ${i}`)).toBe(`${e.ip} . 8080`));
        expect(entries.has(`${addr} . 80 . ${ready.length}`)).toBe(false);
        expect(elementsOf(text, `services-tcp-${ready.length}`)).toContain(`${addr} . 80`);
        expected += ready.length;
      }
    }
    expect(entries.size).toBe(expected);
  });

  it('draws with one DNAT rule per endpoint count, and puts every endpoint in the hairpin set', () => {
    const counts = [...new Set(cluster.services.map((s: { endpoints: { terminating?: boolean }[] }) => s.endpoints.filter((e) => !e.terminating).length))];
    const rules = text.split('\n').filter((l) => l.includes(' dnat ip addr . port to '));
    expect(rules.sort()).toEqual(
      counts.map((n) => `\t\tip daddr . tcp dport @services-tcp-${n} dnat ip addr . port to ip daddr . tcp dport . numgen random mod ${n} map @endpoints-tcp`).sort(),
    );
    const hairpins = elementsOf(text, 'hairpin-connections');
    expect(hairpins).toHaveLength(cluster.services.reduce((n: number, s: { endpoints: { terminating?: boolean }[] }) => n + s.endpoints.filter((e) => !e.terminating).length, 0));
    expect(hairpins[0]).toBe(`${cluster.services[0].endpoints[0].ip} . ${cluster.services[0].endpoints[0].ip} . tcp . 8080`);
  });

  it('is the same text for the same cluster', () => {
    expect(mapOnlyTable(makeCluster(60, { endpoints: 4, mixed: true }))).toBe(text);
  });
});

describe("the benchmark's mix and its affinity", () => {
  const withAffinity = (affinity?: 'all' | 'none') =>
    makeCluster(70, { endpoints: 2, mixed: true, affinity }).services.filter((s: { affinity?: number }) => s.affinity !== undefined).length;

  it('has affinity on one Service in seven, or on every one, or on none', () => {
    expect(withAffinity()).toBe(10);
    expect(withAffinity('all')).toBe(70);
    expect(withAffinity('none')).toBe(0);
    expect(() => makeCluster(1, { mixed: true, affinity: 'some' as 'all' })).toThrow(/affinity: all or none/);
  });

  it('changes nothing else', () => {
    const strip = (c: { services: { affinity?: number }[] }) => c.services.map(({ affinity, ...rest }) => rest);
    expect(strip(makeCluster(70, { endpoints: 2, mixed: true, affinity: 'all' }))).toEqual(strip(makeCluster(70, { endpoints: 2, mixed: true })));
  });
});
