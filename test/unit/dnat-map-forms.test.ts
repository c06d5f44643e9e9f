// kube-proxy 1.36's rule forms in every form the library has: the numgen DNAT map, `ct status
// dnat` with the hairpin set's four-part key, and the inline masquerade mark. The spellings
// are kube-proxy's input and what nft 1.0.6 lists (fixtures/nft/dnat-map.live.json, captured
// from real nft and held to it by test/dnat-map.system.test.ts); both live readers read that
// listing back to the tables written (test/helpers/dnat-map-table.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffTables } from '../../src/diff/diff.js';
import { readLive } from '../../src/live/checked/reader.js';
import { readElements } from '../../src/live/compact/elements.js';
import { ListingRuleReader } from '../../src/live/compact/rules.js';
import { readCompactText } from '../../src/live/compact/start.js';
import { compactView } from '../../src/live/compact/table.js';
import { contentsView, ruleText, type LiveTableView } from '../../src/live/view.js';
import { parseIP } from '../../src/net/ip.js';
import type { Family, Stmt } from '../../src/nft/expr.js';
import type { Json } from '../../src/nft/expr-json.js';
import { Tokens } from '../../src/nft/expr-text-read.js';
import { stmtJson } from '../../src/nft/json.js';
import { ruleStmts } from '../../src/nft/objects.js';
import { keyString } from '../../src/nft/ruleset.js';
import { STMT_FORMS } from '../../src/nft/stmt/index.js';
import { ruleBodyText } from '../../src/nft/text.js';
import { readRuleText } from '../../src/nft/text-read.js';
import { dnatMapTables, hairpinRule, MARK_MASQUERADE_RULE, masqueradeMarkRule, numgenDnatRule } from '../helpers/dnat-map-table.js';
import { ROOT } from '../helpers/kproxc.js';

const LISTING = fs.readFileSync(path.join(ROOT, 'fixtures/nft/dnat-map.live.json'), 'utf8');
const FAMILIES: Family[] = ['ip', 'ip6'];

const numgenDnat = (mod: number, targets: [string, number][]): Stmt => ({ t: 'numgen-dnat', mod, targets: targets.map(([a, port]) => ({ ip: parseIP(a)!, port })) });

/** One statement read by the numgen DNAT map's own text reader. */
const fromText = (text: string) => STMT_FORMS['numgen-dnat'].fromText(new Tokens(text.split(' ')));

describe('the numgen DNAT map', () => {
  const v4 = numgenDnat(2, [
    ['10.0.3.2', 80],
    ['10.0.3.3', 80],
  ]);
  const v6 = numgenDnat(2, [
    ['fd00::1', 80],
    ['fd00::2', 80],
  ]);

  it('is written as kube-proxy writes it', () => {
    expect(ruleBodyText([numgenDnatRule(['10.0.3.2'], 80)[0], v4])).toBe('meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.3.2 . 80 , 1 : 10.0.3.3 . 80 }');
    expect(ruleBodyText([v6])).toBe('dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00::1 . 80 , 1 : fd00::2 . 80 }');
  });

  it('is written in JSON as nft 1.0.6 lists it, the family its addresses\'', () => {
    // Measured: `nft -j list ruleset` of the rule above, loaded with `nft -f`.
    expect(stmtJson(v4, 'ip')).toEqual({
      dnat: {
        family: 'ip',
        addr: {
          map: {
            key: { numgen: { mode: 'random', mod: 2, offset: 0 } },
            data: { set: [[0, { concat: ['10.0.3.2', 80] }], [1, { concat: ['10.0.3.3', 80] }]] },
          },
        },
      },
    });
    expect(JSON.stringify(stmtJson(v6, 'ip6'))).toBe('{"dnat":{"family":"ip6","addr":{"map":{"key":{"numgen":{"mode":"random","mod":2,"offset":0}},"data":{"set":[[0,{"concat":["fd00::1",80]}],[1,{"concat":["fd00::2",80]}]]}}}}}');
  });

  it("its text reader reads kube-proxy's spelling and nft's listing, in both families", () => {
    expect(fromText('dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.3.2 . 80 , 1 : 10.0.3.3 . 80 }')).toEqual(v4);
    expect(fromText('dnat ip to numgen random mod 2 map { 0 : 10.0.3.2 . 80, 1 : 10.0.3.3 . 80 }')).toEqual(v4);
    expect(fromText('dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00::1 . 80 , 1 : fd00::2 . 80 }')).toEqual(v6);
    expect(fromText('dnat ip6 to numgen random mod 2 map { 0 : fd00::1 . 80, 1 : fd00::2 . 80 }')).toEqual(v6);
    expect(fromText('dnat ip to numgen random mod 1 map { 0 : 198.18.38.148 . 80 }')).toEqual(numgenDnat(1, [['198.18.38.148', 80]]));
    // The rule reader takes kproxc's own text only (what it prints back), as for every kind.
    expect(readRuleText('meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.3.2 . 80 , 1 : 10.0.3.3 . 80 }')).toEqual([numgenDnatRule([], 0)[0], v4]);
  });

  it('its readers refuse an address of the other family, and a plain dnat stays a dnat', () => {
    expect(() => fromText('dnat ip to numgen random mod 1 map { 0 : fd00::1 . 80 }')).toThrow();
    expect(() => fromText('dnat ip6 to numgen random mod 1 map { 0 : 10.0.0.1 . 80 }')).toThrow();
    const j = stmtJson(v4, 'ip') as { dnat: { family: string } };
    expect(STMT_FORMS['numgen-dnat'].fromJson({ ...j.dnat, family: 'ip6' }, 'dnat')).toBeNull();
    expect(readRuleText('dnat to 10.0.0.1:80')).toEqual([{ t: 'dnat', ip: parseIP('10.0.0.1'), port: 80 }]);
    expect(readRuleText('dnat to [fd00::1]:80')).toEqual([{ t: 'dnat', ip: parseIP('fd00::1'), port: 80 }]);
  });
});

describe('ct status dnat, the hairpin rule and the inline mark', () => {
  it('are written as kube-proxy writes them (with kproxc\'s marks) and read back', () => {
    const texts = {
      hairpin: 'ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random',
      mark: 'mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random',
      services: 'ip6 daddr @cluster-ips ip6 saddr != fd00:10::/64 mark set mark or 0x00004000',
    };
    expect(ruleBodyText(hairpinRule('ip'))).toBe(texts.hairpin);
    expect(ruleBodyText(MARK_MASQUERADE_RULE)).toBe(texts.mark);
    expect(ruleBodyText(masqueradeMarkRule('ip6'))).toBe(texts.services);
    expect(readRuleText(texts.hairpin)).toEqual(hairpinRule('ip'));
    expect(readRuleText(texts.mark)).toEqual(MARK_MASQUERADE_RULE);
    expect(readRuleText(texts.services)).toEqual(masqueradeMarkRule('ip6'));
    expect(readRuleText('ct status dnat accept')).toEqual([{ t: 'match', left: { t: 'ct', key: 'status' }, op: '==', right: { t: 'sym', s: 'dnat' } }, { t: 'verdict', v: { kind: 'accept' } }]);
    expect(readRuleText('ct status new accept')).toBeNull();
    expect(readRuleText('ct state dnat accept')).toBeNull();
  });

  it('ct status dnat is written in JSON as nft lists it: the operator "in"', () => {
    expect(stmtJson(hairpinRule('ip6')[0], 'ip6')).toEqual({ match: { op: 'in', left: { ct: { key: 'status' } }, right: 'dnat' } });
  });
});

/** Every rule item of our tables in the listing, as its text. */
function ruleItems(text: string): { family: Family; chain: string; item: string; expr: Json[] }[] {
  const out: { family: Family; chain: string; item: string; expr: Json[] }[] = [];
  const items = (JSON.parse(text) as { nftables: Record<string, Record<string, Json>>[] }).nftables;
  for (const x of items) {
    if (!x.rule) continue;
    out.push({ family: x.rule.family as Family, chain: x.rule.chain as string, item: '', expr: x.rule.expr as Json[] });
  }
  const starts = [...text.matchAll(/\{"rule": /g)].map((m) => m.index!);
  starts.forEach((at, i) => (out[i].item = text.slice(at)));
  return out;
}

/** A live table as plain data: chains with their rules' texts and comments, sets with their elements. */
function contents(v: LiveTableView) {
  const chains = Array.from({ length: v.chainCount }, (_, i) => ({
    name: v.chainName(i),
    base: v.chainBase(i),
    rules: v.rules(i).map((r) => ({ text: ruleText(r), comment: r.comment })),
  })).sort((a, b) => (a.name < b.name ? -1 : 1));
  return { table: v.table, chains, sets: v.sets.map((s) => ({ set: s.set, keys: s.keys })) };
}

describe("nft 1.0.6's listing of the tables, read back", () => {
  const tables = dnatMapTables();

  it('lists every rule in the JSON our writer writes, exactly', () => {
    const listed = ruleItems(LISTING);
    const ours = tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map((r) => ({ family: t.table.family, chain: c.chain.name, expr: ruleStmts(r).map((s) => stmtJson(s, t.table.family)) }))));
    expect(listed.map(({ family, chain, expr }) => ({ family, chain, expr }))).toEqual(ours);
  });

  it('the checked reader reads the tables written: the same statements, sets and elements, and no diff', () => {
    const live = readLive([LISTING], 'live.json', { tableName: 'kube-proxy', families: FAMILIES });
    expect(live.map((t) => t.table.family)).toEqual(FAMILIES);
    for (const [i, t] of tables.entries()) {
      for (const c of t.chains) {
        const read = live[i].chains.find((l) => l.chain.name === c.chain.name)!;
        expect(read.rules.map((r) => ({ stmts: ruleStmts(r), comment: r.comment }))).toEqual(c.rules.map((r) => ({ stmts: ruleStmts(r), comment: r.comment })));
      }
      expect(live[i].sets.map((s) => s.elements.map((e) => keyString(e.key)))).toEqual(t.sets.map((s) => s.elements.map((e) => keyString(e.key))));
    }
    expect(diffTables(tables, live)).toEqual({ now: [], later: [] });
  });

  it('the compact reader takes every rule from its text, as the text kproxc prints', () => {
    const reader = new ListingRuleReader('kube-proxy');
    const ours = tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map((r) => ruleBodyText(ruleStmts(r)))));
    expect(ruleItems(LISTING).map((r) => reader.item(r.item, 0)?.text ?? null)).toEqual(ours);

    const read = readCompactText(LISTING, 'kube-proxy');
    expect(read).toMatchObject({ readable: true, problemsIn: [] });
    expect(read.tables.map((t) => t.odd)).toEqual([[], []]);
    const long = readLive([LISTING], 'live.json', { tableName: 'kube-proxy', families: FAMILIES });
    expect(read.tables.map((t) => contents(compactView(t)))).toEqual(long.map((t) => contents(contentsView(t))));
  });

  it('the compact reader reads the hairpin set\'s four-part keys from their text', () => {
    for (const t of tables) {
      const set = t.sets.find((s) => s.set.name === 'hairpin-connections')!;
      const head = `{"set": {"family": "${t.table.family}", "name": "hairpin-connections"`;
      const at = LISTING.indexOf('"elem": [', LISTING.indexOf(head)) + '"elem": ['.length;
      const end = LISTING.indexOf(']}}', at);
      expect(readElements(LISTING, at, end, set.set)?.keys).toEqual(set.elements.map((e) => keyString(e.key)));
    }
  });
});
