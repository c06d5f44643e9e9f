// The live reader on listings captured from real nft 1.0.6 (fixtures/diff/*.live.json,
// rebuilt and compared by test/diff/diff-cases.system.test.ts). A state loaded from a compile
// and read back must diff empty against that compile: each normalisation (no "dynamic"
// flag, the kernel's "size", timeouts in seconds, merged anonymous sets, element comments,
// unordered elements, handles) is checked by that, and some are checked by name below.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ruleStmts } from '../../src/nft/objects.js';
import { describe, expect, it } from 'vitest';
import { UserInputError } from '../../src/diag/diagnostic.js';
import { formatCIDR, type CIDR } from '../../src/net/ip.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { StatementStore } from '../../src/nft/ruleset.js';
import { diffTables } from '../../src/diff/diff.js';
import { readLive, type LiveTable } from '../../src/live/checked/reader.js';
import { formatDiagnostic } from '../../src/diag/diagnostic.js';
import { DIFF_FIXTURES, listDiffCases } from '../helpers/diff-cases.js';
import { parseArgsToOptions } from '../helpers/options.js';

function compiled(file: string, args: string[] = []) {
  const model = loadModel([{ name: file, text: fs.readFileSync(file, 'utf8') }], parseArgsToOptions(args));
  return compileTables(model, { tableName: 'kube-proxy', version: '1.35' }, [], StatementStore);
}

const liveText = (name: string) => fs.readFileSync(path.join(DIFF_FIXTURES, `${name}.live.json`), 'utf8');
const read = (text: string, families: ('ip' | 'ip6')[] = ['ip', 'ip6']) =>
  readLive([text], 'live.json', { tableName: 'kube-proxy', families });

function problems(text: string): string[] {
  try {
    read(text);
  } catch (e) {
    if (e instanceof UserInputError) return e.diagnostics.map(formatDiagnostic);
    throw e;
  }
  throw new Error('no error');
}

describe('reading real nft 1.0.6 listings', () => {
  it('the listings are from nft 1.0.6', () => {
    for (const c of listDiffCases()) {
      expect(JSON.parse(fs.readFileSync(c.liveFile, 'utf8')).nftables[0].metainfo.version).toBe('1.0.6');
    }
  });

  for (const c of listDiffCases().filter((c) => c.before && c.drift.length === 0)) {
    it(`${c.name}: the loaded state reads back as its compile (diff empty)`, () => {
      const live = read(fs.readFileSync(c.liveFile, 'utf8'));
      const desired = compiled(c.before!, c.args);
      expect(diffTables(desired, live)).toEqual({ now: [], later: [] });
      expect(live.map((t) => t.table.family)).toEqual(desired.map((t) => t.table.family));
    });
  }

  const unchanged = read(liveText('unchanged'));
  const table = unchanged[0];
  const set = (live: LiveTable, name: string) => live.sets.find((s) => s.set.name.startsWith(name))!;

  it('reads our table only: not inet kube-proxy, not the foreign table', () => {
    expect(unchanged.map((t) => `${t.table.family} ${t.table.name}`)).toEqual(['ip kube-proxy']);
    expect(read(liveText('unchanged'), ['ip6'])).toEqual([]);
  });

  it('an affinity set lists without "dynamic", with the kernel\'s size, timeout in seconds', () => {
    const raw = JSON.parse(liveText('unchanged')).nftables.find((x: { set?: { name: string } }) => x.set?.name.startsWith('affinity-')).set;
    expect(raw).toMatchObject({ flags: ['timeout'], size: 65535, timeout: 300 });
    expect(set(table, 'affinity-').set).toEqual({
      name: 'affinity-ILFRA5KT-ns2/svc2/tcp/p80__10.180.0.3/80',
      kind: 'set',
      keyType: ['ipv4_addr'],
      flags: ['timeout'],
      size: 65535,
      timeoutSeconds: 300,
    });
  });

  it('members of a set with timeouts are not read (dynamic state)', () => {
    const text = liveText('affinity-timeout');
    expect(text).toContain('{"elem": {"val": "10.9.9.9", "expires": ');
    expect(set(read(text)[0], 'affinity-').elements).toEqual([]);
  });

  it('a merged anonymous set (two adjacent /25s listed as one /24) reads as the same match', () => {
    const rule = table.chains.find((c) => c.chain.name.startsWith('firewall-4AT6LBPK'))!.rules[0];
    expect(liveText('unchanged')).toContain('"right": {"set": ["198.51.100.7", {"prefix": {"addr": "203.0.113.0", "len": 24}}]}');
    expect(ruleStmts(rule)[0]).toMatchObject({ t: 'match', op: '!=', right: { t: 'anonset' } });
    expect(rule.handle).toBeGreaterThan(0);
  });

  it('a range in a merged set reads as the prefixes that cover it', () => {
    const text = liveText('ranges-merged');
    expect(text).toContain('{"range": ["9.0.0.0", "10.255.255.255"]}');
    const rule = read(text)[0].chains.find((c) => c.chain.name.startsWith('firewall-') && c.rules.length > 0 && ruleStmts(c.rules[0])[0]?.t === 'match')!.rules[0];
    const items = (ruleStmts(rule)[0] as { right: { items: { cidr: CIDR }[] } }).right.items;
    expect(items.map((i) => formatCIDR(i.cidr))).toEqual(['9.0.0.0/8', '10.0.0.0/8', '203.0.113.0/24']);
  });

  it('element comments and map verdicts are read', () => {
    expect(set(table, 'no-endpoint-services').elements).toEqual([
      expect.objectContaining({ comment: 'ns4/svc4:p80', value: { kind: 'goto', target: 'reject-chain' } }),
    ]);
  });

  it('base chains read with their numeric priority and policy', () => {
    expect(table.chains.find((c) => c.chain.name === 'filter-output-post-dnat')!.chain.base).toEqual({
      type: 'filter',
      hook: 'output',
      priority: -90,
      policy: 'accept',
    });
  });

  it('reads the listing in chunks of any size the same', () => {
    const text = liveText('drift-repaired');
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 977) chunks.push(text.slice(i, i + 977));
    expect(readLive(chunks, 'x', { tableName: 'kube-proxy', families: ['ip'] })).toEqual(read(text, ['ip']));
  });
});

describe('refusing what kproxc does not write', () => {
  const base = JSON.parse(liveText('unchanged')) as { nftables: Record<string, Record<string, unknown>>[] };
  const withItems = (f: (items: Record<string, Record<string, unknown>>[]) => void) => {
    const doc = structuredClone(base);
    f(doc.nftables);
    return JSON.stringify(doc);
  };
  const firstRuleOf = (items: Record<string, Record<string, unknown>>[], chain: string) =>
    items.find((x) => x.rule && x.rule.family === 'ip' && x.rule.table === 'kube-proxy' && x.rule.chain === chain)!.rule;

  it('a rule with a statement we do not write is read as a foreign rule, to be repaired', () => {
    const text = withItems((items) => (firstRuleOf(items, 'cluster-ips-check').expr as unknown[]).splice(1, 0, { counter: { packets: 0, bytes: 0 } }));
    const tables = read(text);
    const rules = tables[0].chains.find((c) => c.chain.name === 'cluster-ips-check')!.rules;
    expect(rules[0].body).toEqual({ foreign: { setRefs: ['cluster-ips'] } });
    expect(rules[1].body).toHaveProperty('stmts');
  });

  it('a named counter object in our table stops the read', () => {
    const text = withItems((items) => items.push({ counter: { family: 'ip', table: 'kube-proxy', name: 'hits', handle: 999, packets: 0, bytes: 0 } }));
    expect(problems(text)).toEqual([
      expect.stringMatching(/^live\.json:1:\d+: counter hits: a counter in table ip kube-proxy is not something kproxc writes; kproxc cannot diff a table holding this \(replace it with `kproxc compile`\)$/),
    ]);
  });

  it('the same statement in a foreign table is never read', () => {
    expect(liveText('unchanged')).toContain('"counter"');
    expect(() => read(liveText('unchanged'))).not.toThrow();
  });

  it('a ct state we do not write makes a foreign rule', () => {
    const text = withItems((items) => {
      const r = items.find((x) => x.rule?.chain === 'filter-input' && x.rule.family === 'ip')!.rule;
      ((r.expr as Record<string, Record<string, unknown>>[])[0].match as Record<string, unknown>).right = ['established', 'new'];
    });
    const rules = read(text)[0].chains.find((c) => c.chain.name === 'filter-input')!.rules;
    expect(rules[0].body).toEqual({ foreign: { setRefs: [] } });
  });

  it('objects, flags, keys and types we do not write', () => {
    const text = withItems((items) => {
      items.push({ flowtable: { family: 'ip', table: 'kube-proxy', name: 'ft', handle: 99, hook: 'ingress', prio: 0, dev: 'lo' } });
      items.find((x) => x.set?.name === 'cluster-ips')!.set.flags = ['constant'];
      items.find((x) => x.map?.name === 'service-ips')!.map.map = 'inet_proto';
      items.find((x) => x.chain?.name === 'services')!.chain.dev = 'eth0';
      items.find((x) => x.chain?.name === 'nat-output')!.chain.type = 'route';
    });
    expect(problems(text).map((p) => p.replace(/^live\.json:1:\d+: /, ''))).toEqual([
      'set cluster-ips: flags: set flags ["constant"] are not ones kproxc writes; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
      'map service-ips: map: map data type "inet_proto" is not one kproxc writes; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
      'chain nat-output: type: chain type "route" is not one kproxc writes; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
      'chain services: unexpected key "dev"; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
      'flowtable ft: a flowtable in table ip kube-proxy is not something kproxc writes; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
    ]);
  });

  it('an element that does not fit its set', () => {
    const text = withItems((items) => {
      items.find((x) => x.set?.name === 'cluster-ips')!.set.elem = ['172.30.0.41', 'fd00::1', { range: ['1.1.1.1', '1.1.1.9'] }];
    });
    expect(problems(text).map((p) => p.replace(/^live\.json:1:\d+: /, ''))).toEqual([
      'set cluster-ips: elem[1]: element key "fd00::1" does not fit type ipv4_addr; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
    ]);
  });

  it('entries that are not nft\'s schema', () => {
    expect(problems('{"nftables": [{"metainfo": {"json_schema_version": 2}}, {"table": {"name": "kube-proxy"}}, {"a": 1}]}')).toEqual([
      'live.json:1:15: metainfo: json_schema_version 2 is not 1, the one kproxc reads',
      'live.json:1:57: table: not nft\'s schema: a table needs "family" and "name"',
      'live.json:1:92: nftables: each entry must be an object with one key whose value is an object, as nft prints',
    ]);
    expect(problems('{"nftables": [[1]]}')).toEqual(['live.json:1:15: not a listing from `nft -j list ruleset`: expected an object or \']\'']);
  });

  it('an entry of our table before the table itself', () => {
    expect(problems('{"nftables": [{"chain": {"family": "ip", "table": "kube-proxy", "name": "c", "handle": 1}}]}')).toEqual([
      'live.json:1:15: chain c: listed before table ip kube-proxy: give the output of `nft -j list ruleset` or `nft -j list table`; kproxc cannot diff a table holding this (replace it with `kproxc compile`)',
    ]);
  });

  it('not JSON at all, or not a listing', () => {
    expect(problems('table ip kube-proxy {\n}')).toEqual([
      "live.json:1:1: not a listing from `nft -j list ruleset`: expected '{' (this looks like `nft list ruleset` text; use `nft -j list ruleset`)",
    ]);
    expect(problems('{"nftables": [{"table": {"family": "ip", "name": tru}}]}')[0]).toMatch(/^live\.json:1:15: nftables: not JSON: /);
  });
});

describe('the checked reader and fast-load rules', () => {
  it("reads fast-load's endpoint choice, numgen random mod K 0 goto, as nft 1.0.6 lists it", () => {
    const listing = JSON.stringify({
      nftables: [
        { metainfo: { version: '1.0.6', release_name: 'Lester Gooch #5', json_schema_version: 1 } },
        { table: { family: 'ip', name: 'kube-proxy', handle: 1 } },
        { chain: { family: 'ip', table: 'kube-proxy', name: 'service-a', handle: 1 } },
        { chain: { family: 'ip', table: 'kube-proxy', name: 'endpoint-a', handle: 2 } },
        {
          rule: {
            family: 'ip',
            table: 'kube-proxy',
            chain: 'service-a',
            handle: 3,
            expr: [{ match: { op: '==', left: { numgen: { mode: 'random', mod: 2, offset: 0 } }, right: 0 } }, { goto: { target: 'endpoint-a' } }],
          },
        },
      ],
    });
    const [table] = read(listing, ['ip']);
    const rules = table.chains.find((c) => c.chain.name === 'service-a')!.rules;
    expect(rules.map((r) => ruleStmts(r))).toEqual([[{ t: 'match', left: { t: 'numgen', mod: 2 }, op: '==', right: { t: 'num', n: 0 } }, { t: 'verdict', v: { kind: 'goto', target: 'endpoint-a' } }]]);
  });
});
