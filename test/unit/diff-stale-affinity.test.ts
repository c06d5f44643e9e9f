// fast-load's table-wide affinity set: the compile records which endpoint's rules write
// which members, and the diff removes the members of endpoints that are gone (each added, then
// deleted), and nothing else, read by either live reader.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileFamily } from '../../src/backends/nftables/index.js';
import { LAYOUT_SPECS, TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { InternalError } from '../../src/diag/diagnostic.js';
import { diffLive, diffTables } from '../../src/diff/diff.js';
import { readLive } from '../../src/live/checked/reader.js';
import { readCompactText } from '../../src/live/compact/start.js';
import { compactView } from '../../src/live/compact/table.js';
import type { Family } from '../../src/nft/expr.js';
import { StatementStore, statementsBuilder, type TableContents } from '../../src/nft/ruleset.js';
import { PrintedStore } from '../../src/nft/text-table.js';
import { transactionText } from '../../src/nft/text.js';
import { ruleText } from '../../src/live/view.js';
import { ROOT } from '../helpers/kproxc.js';
import { spaced } from '../helpers/live-listing.js';
import { parseArgsToOptions } from '../helpers/options.js';

// `sticky` has ClientIP affinity and three endpoints in each family.
const file = path.join(ROOT, 'fixtures/ovs/dual-stack-node.yaml');
const full = fs.readFileSync(file, 'utf8');
const gone = { ip: '10.244.2.30', ip6: 'fd00.10.244.2..30' };
const reduced = full.replace('- {addresses: [10.244.2.30], nodeName: node-b}\n', '').replace("- {addresses: ['fd00:10:244:2::30'], nodeName: node-b}\n", '');
const client = { ip: '203.0.113.7', ip6: '2001:db8:c::7' };
const FAMILIES: Family[] = ['ip', 'ip6'];
// The sets whose members the readers read, as `diff --layout fast-load` names them.
const MANAGED = LAYOUT_SPECS['fast-load'].managedSets;

function compiled(text: string, form: 'printed' | 'statements'): TableContents[] {
  const model = loadModel([{ name: file, text }], parseArgsToOptions([]));
  return compileTables(model, { tableName: 'kube-proxy', layout: 'fast-load' }, [], form === 'printed' ? PrintedStore : StatementStore);
}

/**
 * The constants of the members written for each endpoint, by its address (an IPv6 one with
 * dots for colons, as in kube-proxy's names for the endpoint): of the `update @affinity` in
 * the rule that DNATs to it (IPv6), or of the lookup that DNATs to it, whose member the
 * recording after NAT writes (IPv4).
 */
function constantsByEndpoint(t: TableContents): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  const forms = [
    /update @affinity \{ ip6? saddr \. numgen random mod 1 offset (\d+) \. numgen random mod 1 offset (\d+) timeout \d+s \} meta l4proto \w+ dnat to \[?([0-9a-f.:]+?)\]?:\d+$/,
    /^ip saddr \. numgen random mod 1 offset (\d+) \. numgen random mod 1(?: offset (\d+))? @affinity meta l4proto \w+ dnat to ([0-9.]+):\d+$/,
  ];
  for (const c of t.chains) {
    for (const r of c.rules) {
      const m = forms.map((f) => f.exec(ruleText(r))).find((x) => x);
      if (m) out.set(m[3].replaceAll(':', '.'), [Number(m[1]), Number(m[2] ?? 0)]);
    }
  }
  return out;
}

/** A listing of our two tables, each with only the table-wide set and these members (as nft lists them). */
function listing(members: Record<Family, [string, number, number][]>): string {
  let handle = 1;
  const items: unknown[] = [{ metainfo: { version: '1.0.6', release_name: 'Lester Gooch #5', json_schema_version: 1 } }];
  for (const family of FAMILIES) {
    items.push({ table: { family, name: 'kube-proxy', handle: handle++ } });
    const set: Record<string, unknown> = {
      family,
      name: 'affinity',
      table: 'kube-proxy',
      type: [family === 'ip' ? 'ipv4_addr' : 'ipv6_addr', 'integer', 'integer'],
      handle: handle++,
      size: 2147483647,
      flags: ['timeout'],
      timeout: 10800,
    };
    if (members[family].length) set.elem = members[family].map(([addr, a, b]) => ({ elem: { val: { concat: [addr, a, b] }, timeout: 60, expires: 56 } }));
    items.push({ set });
  }
  return `{"nftables": [${items.map(spaced).join(', ')}]}\n`;
}

/** The transaction from `listing` to the wanted tables, by each reader and each form of the wanted tables; all must agree. */
function diffBoth(text: string, desiredText: string): string {
  const read = readCompactText(text, 'kube-proxy', MANAGED);
  expect(read).toMatchObject({ readable: true, problemsIn: [] });
  const results = new Set<string>();
  for (const form of ['printed', 'statements'] as const) {
    const desired = compiled(desiredText, form);
    results.add(transactionText(diffTables(desired, readLive([text], 'live.json', { tableName: 'kube-proxy', families: FAMILIES, managedSets: MANAGED })).now));
    results.add(transactionText(diffLive(desired, read.tables.map(compactView)).now));
  }
  expect(results.size).toBe(1);
  return [...results][0];
}

const elementLines = (tx: string) => tx.split('\n').filter((l) => / element ip6? kube-proxy affinity /.test(l));

const byFamily = Object.fromEntries(compiled(full, 'statements').map((t) => [t.table.family, constantsByEndpoint(t)])) as Record<Family, Map<string, [number, number]>>;

describe('the compile records the members its rules write', () => {
  it('the compile records each endpoint (kube-proxy\'s name for its set) as the owner of the constants its updates write', () => {
    for (const form of ['printed', 'statements'] as const) {
      for (const t of compiled(full, form)) {
        const managed = t.sets.filter((s) => s.managed);
        expect(managed.map((s) => s.set.name)).toEqual([...MANAGED]);
        const owners = [...managed[0].managed!.owners].map(([parts, chain]) => `${/__([0-9a-f.]+)\/\d+$/.exec(chain)![1]}: ${parts}`);
        const written = [...byFamily[t.table.family]].map(([ep, [a, b]]) => `${ep}: ${a} . ${b}`);
        expect(owners.sort(), `${t.table.family} ${form}`).toEqual(written.sort());
      }
    }
  });

  it('no other table manages a set: kube-proxy\'s, and fast-load\'s JSON (kube-proxy\'s affinity sets)', () => {
    const model = loadModel([{ name: file, text: full }], parseArgsToOptions([]));
    for (const { layout, version } of TABLE_KINDS) {
      for (const format of ['text', 'json'] as const) {
        const tables = model.families.map((m) => compileFamily(m, { tableName: 'kube-proxy', layout, version, format }, [], new StatementStore()));
        const managed = tables.flatMap((t) => t.sets.filter((s) => s.managed).map((s) => s.set.name));
        // What the layout names is what its tables manage (diff reads the members of those).
        for (const name of managed) expect(LAYOUT_SPECS[layout].managedSets).toContain(name);
        if (layout !== 'fast-load' || format === 'json') expect(managed, `${layout} ${format}`).toEqual([]);
      }
    }
  });

  it('the builder refuses two chains that would write the same members', () => {
    const b = statementsBuilder({ family: 'ip', name: 't' });
    b.set({ name: 's', kind: 'set', keyType: ['ipv4_addr', 'integer', 'integer'], flags: ['dynamic', 'timeout'] });
    b.manage('s', 'a', [{ t: 'int', n: 1 }, { t: 'int', n: 2 }]);
    b.manage('s', 'a', [{ t: 'int', n: 1 }, { t: 'int', n: 2 }]);
    expect(() => b.manage('s', 'b', [{ t: 'int', n: 1 }, { t: 'int', n: 2 }])).toThrow(InternalError);
    expect(() => b.manage('s', 'b', [{ t: 'int', n: 1 }])).toThrow(InternalError);
    expect(() => b.manage('none', 'b', [{ t: 'int', n: 1 }, { t: 'int', n: 2 }])).toThrow(InternalError);
    expect(b.finish().sets[0].managed!.owners).toEqual(new Map([['1 . 2', 'a']]));
  });
});

describe('diff: stale members of the table-wide affinity set', () => {

  it('the fixture has the endpoints the test needs', () => {
    expect(reduced.length).toBeLessThan(full.length - 80);
    for (const f of FAMILIES) {
      expect(byFamily[f].size, f).toBeGreaterThanOrEqual(3);
      expect(byFamily[f].has(gone[f]), f).toBe(true);
    }
  });

  /** The client with every endpoint of the full snapshot, in both families, and one with constants no endpoint has. */
  const everyEndpoint = (): Record<Family, [string, number, number][]> => {
    const out = { ip: [], ip6: [] } as Record<Family, [string, number, number][]>;
    for (const f of FAMILIES) {
      for (const [a, b] of byFamily[f].values()) out[f].push([client[f], a, b]);
      out[f].push([client[f], 12345, 67890]);
    }
    return out;
  };

  it('removes exactly the members of removed endpoints (and of none), all added, then all deleted, at the end', () => {
    const tx = diffBoth(listing(everyEndpoint()), reduced);
    const want: string[] = [];
    for (const f of FAMILIES) {
      // Sorted as the reader sorts the members: by the constants, the address being the same.
      const stale: [number, number][] = [byFamily[f].get(gone[f])!, [12345, 67890]];
      stale.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      // One command adds them all (one may have expired since the listing), one deletes them.
      const members = `{ ${stale.map(([a, b]) => `${client[f]} . ${a} . ${b}`).join(', ')} }`;
      want.push(`add element ${f} kube-proxy affinity ${members}`, `delete element ${f} kube-proxy affinity ${members}`);
    }
    expect(elementLines(tx)).toEqual(want);
    // Last in each family's part of the transaction: after every chain and rule.
    const lines = tx.trim().split('\n');
    for (const f of FAMILIES) {
      const own = lines.filter((l) => new RegExp(`^\\S+ \\S+ ${f} kube-proxy `).test(l));
      expect(own.slice(-2), f).toEqual(want.filter((l) => l.includes(` ${f} kube-proxy `)));
    }
  });

  it('nothing stale: the transaction of an empty set, no element lines', () => {
    const kept = everyEndpoint();
    for (const f of FAMILIES) kept[f] = kept[f].filter(([, a, b]) => [...byFamily[f].values()].some(([x, y]) => x === a && y === b));
    const tx = diffBoth(listing(kept), full);
    expect(elementLines(tx)).toEqual([]);
    expect(tx).toBe(diffBoth(listing({ ip: [], ip6: [] }), full));
  });

  it('kube-proxy layout wanted: the set goes whole, no member is touched', () => {
    const model = loadModel([{ name: file, text: reduced }], parseArgsToOptions([]));
    const live = readLive([listing(everyEndpoint())], 'live.json', { tableName: 'kube-proxy', families: FAMILIES, managedSets: MANAGED });
    const tx = transactionText(diffTables(compileTables(model, { tableName: 'kube-proxy' }, [], StatementStore), live).now);
    expect(elementLines(tx)).toEqual([]);
    expect(tx).toContain('delete set ip kube-proxy affinity');
  });
});

describe('live readers: members of sets with timeouts', () => {
  // kube-proxy's per-endpoint affinity set beside the table-wide one, both with members.
  const text = `{"nftables": [${[
    { table: { family: 'ip', name: 'kube-proxy', handle: 1 } },
    { set: { family: 'ip', name: 'affinity', table: 'kube-proxy', type: ['ipv4_addr', 'integer', 'integer'], handle: 2, size: 2147483647, flags: ['timeout'], timeout: 10800, elem: [{ elem: { val: { concat: ['203.0.113.2', 1499248381, 2110964128] }, timeout: 60, expires: 56 } }, { elem: { val: { concat: ['203.0.113.1', 7, 8] }, expires: 10799 } }] } },
    { set: { family: 'ip', name: 'affinity-X4GZ3LYA-ns1/svc1/tcp/p80__10.1.0.1/80', table: 'kube-proxy', type: 'ipv4_addr', handle: 3, size: 65535, flags: ['timeout'], timeout: 10800, elem: [{ elem: { val: '203.0.113.2', timeout: 10800, expires: 10790 } }] } },
  ]
    .map(spaced)
    .join(', ')}]}`;

  it('leave both unread unless named managed', () => {
    const checked = readLive([text], 'live.json', { tableName: 'kube-proxy', families: ['ip'] })[0];
    const compact = compactView(readCompactText(text, 'kube-proxy').tables[0]);
    expect(checked.sets.map((s) => s.elements.length)).toEqual([0, 0]);
    expect(compact.sets.map((s) => s.keys.length)).toEqual([0, 0]);
  });

  it('read the managed table-wide set as address and two integers, sorted; leave the per-endpoint set unread; both readers alike', () => {
    const checked = readLive([text], 'live.json', { tableName: 'kube-proxy', families: ['ip'], managedSets: MANAGED })[0];
    const read = readCompactText(text, 'kube-proxy', MANAGED);
    expect(read).toMatchObject({ readable: true, problemsIn: [] });
    const compact = compactView(read.tables[0]);
    for (const sets of [checked.sets.map((s) => ({ name: s.set.name, keys: s.elements.map((e) => e.key) })), compact.sets.map((s) => ({ name: s.set.name, keys: s.keys.map((_, i) => s.element(i).key) }))]) {
      expect(sets).toEqual([
        {
          name: 'affinity',
          keys: [
            [{ t: 'ip', ip: { family: 4, bytes: Uint8Array.from([203, 0, 113, 1]) } }, { t: 'int', n: 7 }, { t: 'int', n: 8 }],
            [{ t: 'ip', ip: { family: 4, bytes: Uint8Array.from([203, 0, 113, 2]) } }, { t: 'int', n: 1499248381 }, { t: 'int', n: 2110964128 }],
          ],
        },
        { name: 'affinity-X4GZ3LYA-ns1/svc1/tcp/p80__10.1.0.1/80', keys: [] },
      ]);
    }
  });
});
