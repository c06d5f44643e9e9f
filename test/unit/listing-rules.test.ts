// A rule's listing text straight to kproxc's rule text (src/live/compact/rules.ts) must give
// exactly what reading the JSON (live/checked/json.ts) and printing it (text.ts) give, or nothing.
import * as fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import type { Family, Stmt } from '../../src/nft/expr.js';
import { readStmts } from '../../src/live/checked/json.js';
import type { Json } from '../../src/nft/expr-json.js';
import { stmtJson } from '../../src/nft/json.js';
import { ListingRuleReader } from '../../src/live/compact/rules.js';
import { ruleBodyText } from '../../src/nft/text.js';
import { listDiffCases } from '../helpers/diff-cases.js';
import { nftSpaced, stmtsArb } from '../helpers/stmts.js';

const reader = new ListingRuleReader('kube-proxy');

/** The text of a rule with these statements (an expr array), read from its item; it must end exactly there. */
function fast(exprText: string, family: Family, comment?: string, r = reader): string | null {
  const head = `{"rule": {"family": "${family}", "table": "kube-proxy", "chain": "svc-1/x", "handle": 42, `;
  const item = `${head}${comment === undefined ? '' : `"comment": ${JSON.stringify(comment)}, `}"expr": ${exprText}}}`;
  const read = r.item(`${item}, {"rule": {}}`, 0);
  if (read !== null) expect(read).toEqual({ family, chain: 'svc-1/x', handle: 42, comment, text: read.text, end: item.length });
  return read && read.text;
}

/** The long way: JSON.parse, read and check, print; null when it is not a rule kproxc writes. */
function slow(exprText: string, family: Family): string | null {
  try {
    return ruleBodyText(readStmts(JSON.parse(exprText) as Json, family).stmts);
  } catch {
    return null;
  }
}

const listing = (stmts: Stmt[], family: Family) => nftSpaced(stmts.map((s) => stmtJson(s, family)));

describe('rules read straight from the listing text', () => {
  it('every rule of the captured listings reads as the long way reads it', () => {
    let read = 0;
    for (const c of listDiffCases()) {
      for (const item of JSON.parse(fs.readFileSync(c.liveFile, 'utf8')).nftables as { rule?: { family: string; expr: Json } }[]) {
        if (!item.rule || (item.rule.family !== 'ip' && item.rule.family !== 'ip6')) continue;
        const family = item.rule.family as Family;
        const text = nftSpaced(item.rule.expr);
        const got = fast(text, family);
        if (got !== null) read++;
        if (got !== null || slow(text, family) === null) expect(got).toBe(slow(text, family));
      }
    }
    expect(read).toBeGreaterThan(500);
  });

  it('random statements as nft lists them read as the long way reads them, by shape or statement by statement', () => {
    fc.assert(
      fc.property(stmtsArb, fc.constantFrom<Family>('ip', 'ip6'), fc.option(fc.constantFrom('a comment', 'x')), (stmts, family, comment) => {
        const text = listing(stmts, family);
        const want = slow(text, family);
        // The first reading of a shape is statement by statement; the second, by the shape learnt.
        const fresh = new ListingRuleReader('kube-proxy');
        for (const got of [fast(text, family, comment ?? undefined, fresh), fast(text, family, comment ?? undefined, fresh)]) {
          if (got !== null) expect(got).toBe(want);
        }
      }),
      fcParams(2000),
    );
  });

  it('a shape learnt reads other values, and leaves values it cannot take to the long way', () => {
    const r = new ListingRuleReader('kube-proxy');
    const item = (addr: string, target: string) =>
      `{"rule": {"family": "ip6", "table": "kube-proxy", "chain": "c", "handle": 1, "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "ip6", "field": "saddr"}}, "right": "${addr}"}}, {"jump": {"target": "${target}"}}]}}`;
    expect(r.item(item('fd00::1', 'a'), 0)?.text).toBe('ip6 saddr fd00::1 jump a');
    expect(r.item(item('fd00::2:0:0:3', 'b.c'), 0)?.text).toBe('ip6 saddr fd00::2:0:0:3 jump b.c');
    expect(r.item(item('fd00:0::1', 'a'), 0)).toBeNull(); // not the canonical spelling
    expect(r.item(item('10.0.0.1', 'a'), 0)).toBeNull(); // not an IPv6 address
    expect(r.item(item('fd00::1', 'a b'), 0)).toBeNull(); // not a name kproxc writes
    expect(r.item(item('fd00::1', 'a').replace('kube-proxy', 'other'), 0)).toBeNull(); // not our table
  });

  it('reads the common forms without the long way', () => {
    const ip = (s: string) => ({ family: 4 as const, bytes: Uint8Array.from(s.split('.').map(Number)) });
    const common: Stmt[][] = [
      [{ t: 'match', left: { t: 'payload', proto: 'ip', field: 'saddr' }, op: '==', right: { t: 'ip', ip: ip('10.0.0.1') } }, { t: 'verdict', v: { kind: 'jump', target: 'mark-for-masquerade' } }],
      [{ t: 'match', left: { t: 'meta', key: 'l4proto' }, op: '==', right: { t: 'sym', s: 'tcp' } }, { t: 'dnat', ip: ip('10.0.0.1'), port: 8080 }],
      [{ t: 'update', set: 'affinity-x', key: { t: 'payload', proto: 'ip', field: 'saddr' } }],
      [{ t: 'numgen-vmap', mod: 2, targets: [{ kind: 'goto', target: 'a' }, { kind: 'goto', target: 'b' }] }],
      [{ t: 'match', left: { t: 'ct', key: 'state' }, op: '==', right: { t: 'sym', s: 'new' } }, { t: 'verdict', v: { kind: 'jump', target: 'x' } }],
      [{ t: 'match', left: { t: 'payload', proto: 'ip', field: 'saddr' }, op: '!=', right: { t: 'anonset', items: [{ t: 'ip', ip: ip('10.0.0.1') }, { t: 'ip', ip: ip('10.0.0.9') }] } }, { t: 'verdict', v: { kind: 'drop' } }],
    ];
    for (const stmts of common) expect(fast(listing(stmts, 'ip'), 'ip')).toBe(ruleBodyText(stmts));
  });

  it('leaves to the long way what is not exactly nft\'s spelling of what kproxc writes', () => {
    const jump = '{"jump": {"target": "x"}}';
    for (const [text, family] of [
      ['[{"jump": {"target": "a\\u0062"}}]', 'ip'], // an escape
      ['[{"jump": {"target": "a b"}}]', 'ip'], // a name kproxc does not write
      ['[{"jump":{"target": "x"}}]', 'ip'], // other spacing
      [`[{"match": {"left": {"ct": {"key": "state"}}, "op": "in", "right": "new"}}, ${jump}]`, 'ip'], // other key order
      [`[{"match": {"op": "in", "left": {"meta": {"key": "l4proto"}}, "right": "tcp"}}, ${jump}]`, 'ip'], // "in" on a value
      [`[{"match": {"op": "==", "left": {"ct": {"key": "state"}}, "right": "new"}}, ${jump}]`, 'ip'], // "==" on a flag
      ['[{"reject": {"type": "icmp", "expr": "port-unreachable"}}]', 'ip6'],
      ['[{"vmap": {"key": {"concat": [{"numgen": {"mode": "random", "mod": 2, "offset": 0}}, {"meta": {"key": "mark"}}]}, "data": {"set": [[0, {"drop": null}]]}}}]', 'ip'],
      ['[{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.0.0.1", "len": 24}}}}]', 'ip'],
      ['[{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.0.0.1", "len": 32}}}}]', 'ip'],
      ['[{"match": {"op": "==", "left": {"payload": {"protocol": "ip6", "field": "saddr"}}, "right": "fd00:0::1"}}]', 'ip6'],
      ['[{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"set": [{"range": ["9.0.0.0", "10.255.255.255"]}]}}}]', 'ip'],
      ['[{"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": "eth0"}}, {"accept": null}]', 'ip'],
      [`[{"counter": {"packets": 0, "bytes": 0}}, ${jump}]`, 'ip'],
      [`[${jump}, ]`, 'ip'],
    ] as [string, Family][]) {
      expect(fast(text, family), text).toBeNull();
    }
  });
});
