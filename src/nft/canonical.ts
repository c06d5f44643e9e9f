// One comparable form for a rule, whether it comes from our compiler (through stmtJson) or
// from `nft -j list ruleset`. stmtJson already writes nft 1.0.6's listing form; what is left
// are the things nft computes when it loads a rule:
// - an address match against a set, prefix, range or address is compared as the merged
//   address intervals it matches (nft sorts, merges and collapses anonymous sets);
// - the listing's object keys may come in another order than ours (jsonEquals).
// Rule keys are made from stmtJson output only, whose key order is fixed, so plain
// JSON.stringify compares them.
import { InternalError } from '../diag/diagnostic.js';
import { addressBits, cidrOf, formatIP, hostCIDR, parseIP, type IPFamily } from '../net/ip.js';
import type { Family, Stmt } from './expr.js';
import { bigToIP, cidrInterval, intervalsText, mergeIntervals, type Interval } from './intervals.js';
import type { Json } from './expr-json.js';
import { stmtJson } from './json.js';
import type { Rule } from './objects.js';
import { readRuleText } from './text-read.js';

type Obj = { [k: string]: Json };
const isObj = (j: Json): j is Obj => j !== null && typeof j === 'object' && !Array.isArray(j);

function isAddressPayload(left: Json): boolean {
  if (!isObj(left) || !isObj(left.payload)) return false;
  const p = left.payload;
  return (p.protocol === 'ip' || p.protocol === 'ip6') && (p.field === 'saddr' || p.field === 'daddr');
}

/** The intervals one right-hand item matches, or null when it is not an address form. */
function itemIntervals(j: Json): { family: IPFamily; iv: Interval } | null {
  if (typeof j === 'string') {
    const ip = parseIP(j);
    if (!ip) return null;
    return { family: ip.family, iv: cidrInterval(hostCIDR(ip)) };
  }
  if (!isObj(j)) return null;
  if (isObj(j.prefix) && typeof j.prefix.addr === 'string' && typeof j.prefix.len === 'number') {
    const ip = parseIP(j.prefix.addr);
    const len = j.prefix.len;
    if (!ip || !Number.isInteger(len) || len < 0 || len > addressBits(ip.family)) return null;
    return { family: ip.family, iv: cidrInterval(cidrOf(ip, len)) };
  }
  if (Array.isArray(j.range) && j.range.length === 2 && typeof j.range[0] === 'string' && typeof j.range[1] === 'string') {
    const lo = parseIP(j.range[0]);
    const hi = parseIP(j.range[1]);
    if (!lo || !hi || lo.family !== hi.family) return null;
    const l = cidrInterval(hostCIDR(lo)).lo;
    const h = cidrInterval(hostCIDR(hi)).lo;
    if (l > h) return null;
    return { family: lo.family, iv: { lo: l, hi: h } };
  }
  return null;
}

/**
 * An address right-hand side as the one address it matches, or as {"intervals": [...]};
 * anything else unchanged.
 */
function canonicalAddressValue(right: Json): Json {
  if (typeof right === 'string') {
    // The common case, kept cheap: one address.
    const ip = parseIP(right);
    return ip ? formatIP(ip) : right;
  }
  const items = isObj(right) && Array.isArray(right.set) ? right.set : [right];
  const parsed = items.map(itemIntervals);
  if (parsed.length === 0 || parsed.some((p) => p === null)) return right;
  const family = parsed[0]!.family;
  if (parsed.some((p) => p!.family !== family)) return right;
  const merged = mergeIntervals(parsed.map((p) => p!.iv));
  if (merged.length === 1 && merged[0].lo === merged[0].hi) return formatIP(bigToIP(merged[0].lo, family));
  return { intervals: intervalsText(merged, family) };
}

export function canonicalStmt(s: Json): Json {
  if (!isObj(s) || !isObj(s.match)) return s;
  const m = s.match;
  if (!isAddressPayload(m.left)) return s;
  return { match: { ...m, right: canonicalAddressValue(m.right) } };
}

/** Deep equality of JSON values; object key order does not matter. */
export function jsonEquals(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEquals(x, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => k in b && jsonEquals(a[k], b[k]));
}

/** The comparison key of a rule from its statements in canonical form, and its comment. */
export function keyOf(canonical: Json[], comment: string | undefined): string {
  return JSON.stringify([canonical, comment ?? null]);
}

// Keys of rules read from a listing, made while the reader checked them, so that a large
// listing is not rendered twice.
const knownKeys = new WeakMap<Rule, string>();

export function rememberRuleKey(rule: Rule, key: string): void {
  knownKeys.set(rule, key);
}

/**
 * A rule's statements: kept, or read back from its text (a table built for printing keeps
 * only the text, and so does a compact live table). The text is kproxc's own printing,
 * so failing to read it is a bug.
 */
export function ruleStatements(rule: Rule): Stmt[] {
  const b = rule.body;
  if ('stmts' in b) return b.stmts;
  if ('foreign' in b) return [];
  const stmts = readRuleText(b.text);
  if (!stmts) throw new InternalError(`rule text in ${rule.chain} cannot be read back: ${b.text.slice(0, 200)}`);
  return stmts;
}

/** The comparison key of statements in canonical form, and a comment. */
export function stmtsKey(stmts: Stmt[], comment: string | undefined, family: Family): string {
  return keyOf(stmts.map((s) => canonicalStmt(stmtJson(s, family))), comment);
}

// The canonical statements (as JSON text) of rule texts already read, per family: a large
// table repeats the same rule text in many chains (the same source ranges in every
// firewall chain), and nft's spelling of it differs from kproxc's in all of them alike.
const canonicalOfText = { ip: new Map<string, string>(), ip6: new Map<string, string>() };

/** The comparison key of a rule: its statements in canonical form, and its comment. */
export function ruleKey(rule: Rule, family: Family): string {
  const known = knownKeys.get(rule);
  if (known !== undefined) return known;
  const b = rule.body;
  if (!('text' in b)) return stmtsKey(ruleStatements(rule), rule.comment, family);
  const cache = canonicalOfText[family];
  let canonical = cache.get(b.text);
  if (canonical === undefined) {
    canonical = JSON.stringify(ruleStatements(rule).map((s) => canonicalStmt(stmtJson(s, family))));
    cache.set(b.text, canonical);
  }
  // The same string keyOf makes: JSON.stringify([canonical, comment]).
  return `[${canonical},${JSON.stringify(rule.comment ?? null)}]`;
}
