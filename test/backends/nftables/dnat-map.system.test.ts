// kube-proxy 1.36's forms on real nft (test/helpers/dnat-map-table.ts, both families): the
// text kproxc writes loads, lists as fixtures/nft/dnat-map.live.json, and both live readers
// read that listing back to the tables written; `nft list ruleset` shows each rule as the
// text readers read it (the numgen DNAT map in nft's own spelling); and the JSON kproxc
// writes loads with `nft -j -f` and lists the same rules.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffTables } from '../../../src/diff/diff.js';
import { readLive } from '../../../src/live/checked/reader.js';
import { readCompactText } from '../../../src/live/compact/start.js';
import type { Family, Stmt } from '../../../src/nft/expr.js';
import { Tokens } from '../../../src/nft/expr-text-read.js';
import { transactionJson } from '../../../src/nft/json.js';
import { ruleStmts } from '../../../src/nft/objects.js';
import { STMT_FORMS } from '../../../src/nft/stmt/index.js';
import { ruleBodyText, transactionText } from '../../../src/nft/text.js';
import { readRuleText } from '../../../src/nft/text-read.js';
import { fullReplace } from '../../../src/nft/transaction.js';
import { dnatMapTables } from '../../helpers/dnat-map-table.js';
import { ROOT } from '../../helpers/kproxc.js';
import { canonicalListing, withNetns } from '../../helpers/netns.js';

const FIXTURE = path.join(ROOT, 'fixtures/nft/dnat-map.live.json');
const FAMILIES: Family[] = ['ip', 'ip6'];
const tables = dnatMapTables();
const tx = fullReplace(tables);

/** The rule lines of our tables in `nft list ruleset` text: "family chain" to the bodies, comments kept. */
function listedRules(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let family = '';
  let chain: string[] | undefined;
  for (const line of text.split('\n')) {
    const t = /^table (ip6?) kube-proxy \{$/.exec(line);
    const c = /^\tchain (\S+) \{$/.exec(line);
    if (t) family = t[1];
    else if (c) out.set(`${family} ${c[1]}`, (chain = []));
    else if (line === '\t}') chain = undefined;
    else if (chain && line.startsWith('\t\t') && !line.startsWith('\t\ttype ')) chain.push(line.slice(2));
  }
  return out;
}

// nft's own spelling of the marks (kproxc writes kube-proxy's `mark and ...`, `mark set mark or ...`).
const NFT_SPELLS: Record<string, string> = {
  'mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random': 'meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random',
  'ip daddr @cluster-ips ip saddr != 10.244.0.0/16 mark set mark or 0x00004000': 'ip daddr @cluster-ips ip saddr != 10.244.0.0/16 meta mark set meta mark | 0x00004000',
  'ip6 daddr @cluster-ips ip6 saddr != fd00:10::/64 mark set mark or 0x00004000': 'ip6 daddr @cluster-ips ip6 saddr != fd00:10::/64 meta mark set meta mark | 0x00004000',
};

/** A listed rule body read back: as kproxc's own text, or with the DNAT map in nft's spelling. */
function readListed(body: string): Stmt[] | null {
  const own = readRuleText(body);
  if (own) return own;
  const at = body.indexOf(' dnat ');
  if (at < 0) return null;
  const head = readRuleText(body.slice(0, at));
  const t = new Tokens(body.slice(at + 1).split(' '));
  const map = STMT_FORMS['numgen-dnat'].fromText(t);
  return head && t.done ? [...head, map] : null;
}

describe('kube-proxy 1.36 forms in real nft', () => {
  it('load, list as the fixture, and read back with both readers to the tables written', async () => {
    await withNetns('dm', (ns) => {
      ns.nft(['-f', '-'], transactionText(tx));
      const listing = ns.nft(['-j', 'list', 'ruleset']);
      expect(JSON.parse(listing)).toEqual(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));

      const live = readLive([listing], 'live.json', { tableName: 'kube-proxy', families: FAMILIES });
      expect(diffTables(tables, live)).toEqual({ now: [], later: [] });
      for (const [i, t] of tables.entries()) {
        for (const c of t.chains) {
          const read = live[i].chains.find((l) => l.chain.name === c.chain.name)!;
          expect(read.rules.map((r) => ruleStmts(r))).toEqual(c.rules.map((r) => ruleStmts(r)));
        }
      }
      const compact = readCompactText(listing, 'kube-proxy');
      expect(compact).toMatchObject({ readable: true, problemsIn: [] });
      expect(compact.tables.map((t) => t.odd)).toEqual([[], []]);
    });
  });

  it('`nft list ruleset` shows every rule as the text readers read it', async () => {
    const text = await withNetns('dm', (ns) => {
      ns.nft(['-f', '-'], transactionText(tx));
      return ns.nft(['list', 'ruleset']);
    });
    const listed = listedRules(text);
    for (const t of tables) {
      for (const c of t.chains) {
        const lines = listed.get(`${t.table.family} ${c.chain.name}`);
        expect(lines, `${t.table.family} ${c.chain.name}`).toHaveLength(c.rules.length);
        c.rules.forEach((r, k) => {
          const comment = r.comment === undefined ? '' : ` comment "${r.comment}"`;
          const line = lines![k];
          expect(line.endsWith(comment)).toBe(true);
          const body = line.slice(0, line.length - comment.length);
          const ours = ruleBodyText(ruleStmts(r));
          if (NFT_SPELLS[ours] !== undefined) expect(body).toBe(NFT_SPELLS[ours]);
          else expect(readListed(body), body).toEqual(ruleStmts(r));
        });
      }
    }
    // The DNAT map is among them, in nft's spelling.
    expect(text).toContain('meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.244.0.10 . 9898, 1 : 10.244.0.8 . 9898 }');
    expect(text).toContain('meta l4proto tcp dnat ip6 to numgen random mod 2 map { 0 : fd00:10::a . 9898, 1 : fd00:10::8 . 9898 }');
  });

  it('the JSON kproxc writes loads with `nft -j -f` and lists the same rules and elements', async () => {
    const [fromText, fromJson] = await withNetns('dm', (ns) => {
      ns.nft(['-f', '-'], transactionText(tx));
      const a = ns.nft(['-j', 'list', 'ruleset']);
      ns.nft(['flush', 'ruleset']);
      ns.nft(['-j', '-f', '-'], transactionJson(tx));
      return [a, ns.nft(['-j', 'list', 'ruleset'])];
    });
    // Handles aside; nft 1.0.6's JSON input cannot carry table, set and map comments (src/nft/json.ts).
    const items = (listing: string) =>
      (canonicalListing(listing) as Record<string, Record<string, unknown>>[]).map((x) => {
        const kind = Object.keys(x)[0];
        if (kind === 'rule') return x;
        const { comment: _c, ...rest } = x[kind];
        return { [kind]: rest };
      });
    expect(items(fromJson)).toEqual(items(fromText));
    const live = readLive([fromJson], 'live.json', { tableName: 'kube-proxy', families: FAMILIES });
    expect(live.map((t) => t.chains.map((c) => c.rules.map((r) => ruleStmts(r))))).toEqual(tables.map((t) => t.chains.map((c) => c.rules.map((r) => ruleStmts(r)))));
  });
});
