// Every statement kind through every form it has (src/nft/stmt/<kind>.ts and
// src/live/compact/stmt-listing.ts): its text (text.ts) read back (text-read.ts), its JSON
// (json.ts) read back as the checked reader reads a listing (live/checked/json.ts), and its
// listing text read by the compact reader (live/compact/rules.ts). The kinds come
// from test/helpers/stmts.ts, whose generators are keyed by Stmt['t']: a kind added to
// expr.ts fails the type check there until it has a generator, and then fails here until
// every reader takes it. A reader that misses a kind would otherwise only fall back and be
// slower, silently.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readStmts } from '../../src/live/checked/json.js';
import { ListingRuleReader } from '../../src/live/compact/rules.js';
import { STMT_LISTING } from '../../src/live/compact/stmt-listing.js';
import { stmtsKey } from '../../src/nft/canonical.js';
import type { Family, Stmt } from '../../src/nft/expr.js';
import type { Json } from '../../src/nft/expr-json.js';
import { stmtJson } from '../../src/nft/json.js';
import { STMT_FORMS } from '../../src/nft/stmt/index.js';
import { ruleBodyText } from '../../src/nft/text.js';
import { readRuleText } from '../../src/nft/text-read.js';
import { nftSpaced, stmtArbs } from '../helpers/stmts.js';

const RUNS = 150;
const families: Family[] = ['ip', 'ip6'];
const kinds = Object.keys(stmtArbs) as Stmt['t'][];

/** The rule text the compact reader makes of one rule item with these statements, or null. */
function listed(stmts: Stmt[], family: Family): string | null {
  const expr = nftSpaced(stmts.map((s) => stmtJson(s, family)));
  const item = `{"rule": {"family": "${family}", "table": "kube-proxy", "chain": "c", "handle": 7, "expr": ${expr}}}`;
  const read = new ListingRuleReader('kube-proxy').item(`${item}, {"rule": {}}`, 0);
  return read && read.end === item.length ? read.text : null;
}

describe('every statement kind in every form', () => {
  it('the generators cover every kind the type has', () => {
    // A compile-time check in stmts.ts; this says which kinds the run below covers.
    expect(kinds.sort()).toEqual(['dnat', 'map-addr-dnat', 'map-dnat', 'mark-set', 'masquerade', 'match', 'numgen-dnat', 'numgen-vmap', 'reject', 'update', 'verdict', 'vmap']);
    expect(Object.keys(STMT_FORMS).sort()).toEqual(kinds);
    expect(Object.keys(STMT_LISTING).sort()).toEqual(kinds);
  });

  for (const kind of kinds) {
    it(`${kind}: text, JSON and the listing read back to the same statement`, () => {
      let fromListing = 0;
      let runs = 0;
      fc.assert(
        fc.property(stmtArbs[kind] as fc.Arbitrary<Stmt>, fc.constantFrom(...families), (s, family) => {
          runs++;
          const stmts = [s];
          const key = stmtsKey(stmts, undefined, family);
          const text = ruleBodyText(stmts);
          // From text.
          const back = readRuleText(text);
          expect(back, text).not.toBeNull();
          expect(ruleBodyText(back!)).toBe(text);
          expect(stmtsKey(back!, undefined, family)).toBe(key);
          // From JSON, as the listing shows it.
          const json = JSON.parse(nftSpaced(stmts.map((x) => stmtJson(x, family)))) as Json;
          const read = readStmts(json, family).stmts;
          expect(stmtsKey(read, undefined, family)).toBe(key);
          // From the listing's text: what the compact reader reads is the text of what the
          // checked reader reads (a set of one address, say, is that address in both).
          const fast = listed(stmts, family);
          if (fast !== null) {
            expect(fast).toBe(ruleBodyText(read));
            fromListing++;
          }
        }),
        { numRuns: RUNS },
      );
      // The compact reader takes every kind (though not every spelling: interface names,
      // for one, are left to the checked reader).
      expect(fromListing, `${kind} read from the listing's text`).toBeGreaterThan(runs / 4);
    });
  }
});
