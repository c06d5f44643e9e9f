// What a ruleset holds, counted over its tables: the figures `compile --stats` prints and
// the load cost model (load-cost.ts) is fitted on. Anonymous sets and maps inside rules
// (`ip daddr { ... }`, `vmap { ... }`, `dnat ... map { ... }`) are counted as sets, their
// items as elements: the kernel makes each one as it makes a named set, and the square
// terms of the load's cost come from looking sets up among those the table already holds.
import type { Stmt, Value } from './expr.js';
import { printed } from './expr-text.js';
import { writeStmt } from './text.js';
import type { ChainContents, TableContents } from './ruleset.js';

export interface RulesetCounts {
  tables: number;
  chains: number;
  rules: number;
  /** Named sets (`set NAME { ... }`). */
  sets: number;
  /** Named maps (`map NAME { ... }`). */
  maps: number;
  /** Sets and maps written inside rules. */
  anonymousSets: number;
  /** Elements of named sets and maps, and items of anonymous ones. */
  elements: number;
  /**
   * Per table, the square of all its sets (named and anonymous), summed: each set made is
   * looked up by walking the sets made before it in its table, so a load pays about this.
   */
  setSquares: number;
  /**
   * Per table, the square of its sets times all its objects (chains, rules, sets,
   * elements), summed. Fitted, not derived: a step of those walks costs more the larger
   * the transaction (the sets' memory lies among all its objects, and falls out of the
   * CPU's caches), so the kube-proxy layout's load grows faster than the square of its
   * sets, the more so the more chains and rules it has (scripts/bench-fit.mjs).
   */
  setSquareObjects: number;
}

/** The sets written inside one rule, and their items. */
interface Anonymous {
  sets: number;
  elements: number;
}

function valueSets(v: Value, into: Anonymous): void {
  if (v.t !== 'anonset') return;
  into.sets++;
  into.elements += v.items.length;
}

/**
 * A statement's anonymous sets and maps. The kinds known to hold them are read from their
 * fields; any other kind from its nft text, so that a kind added later is counted as nft
 * will read it without a change here.
 */
function stmtSets(s: Stmt, into: Anonymous): void {
  switch (s.t) {
    case 'match':
      valueSets(s.right, into);
      return;
    case 'numgen-vmap':
      into.sets++;
      into.elements += s.targets.length;
      return;
    case 'numgen-dnat':
      into.sets++;
      into.elements += s.targets.length;
      return;
    // Statements that hold no set, or name one (`vmap @map`, `update @set { key }`).
    case 'vmap':
    case 'verdict':
    case 'mark-set':
    case 'masquerade':
    case 'dnat':
    case 'update':
    case 'reject':
      return;
    default:
      textSets(printed((o) => writeStmt(o, s)), into);
  }
}

/** Strips quoted strings (comments, interface names), whose braces are not sets. */
const unquoted = (text: string) => text.replace(/"(?:[^"\\]|\\.)*"/g, '""');

/**
 * The anonymous sets in a rule kept as nft text: each `{` that does not follow `@NAME`
 * (`update @set { key }` writes a named set) opens one, whose items are its top-level
 * commas plus one.
 */
export function textSets(text: string, into: Anonymous): void {
  const t = unquoted(text);
  for (let i = t.indexOf('{'); i !== -1; i = t.indexOf('{', i + 1)) {
    if (/@\S+\s*$/.test(t.slice(Math.max(0, i - 300), i))) continue;
    let depth = 0;
    let items = 1;
    for (let j = i; j < t.length; j++) {
      if (t[j] === '{') depth++;
      else if (t[j] === '}' && --depth === 0) break;
      else if (t[j] === ',' && depth === 1) items++;
    }
    into.sets++;
    into.elements += items;
  }
}

function chainSets(c: ChainContents, into: Anonymous): number {
  if (c.printed) {
    for (let k = 0; k < c.printed.count; k++) textSets(c.printed.text(k), into);
    return c.printed.count;
  }
  for (const r of c.rules) {
    if ('stmts' in r.body) for (const s of r.body.stmts) stmtSets(s, into);
    else if ('text' in r.body) textSets(r.body.text, into);
  }
  return c.rules.length;
}

export const NO_COUNTS: RulesetCounts = { tables: 0, chains: 0, rules: 0, sets: 0, maps: 0, anonymousSets: 0, elements: 0, setSquares: 0, setSquareObjects: 0 };

/** What the tables hold, added up over them. */
export function countRuleset(tables: readonly TableContents[]): RulesetCounts {
  const n = { ...NO_COUNTS };
  for (const t of tables) {
    const anon: Anonymous = { sets: 0, elements: 0 };
    n.tables++;
    n.chains += t.chains.length;
    let rules = 0;
    for (const c of t.chains) rules += chainSets(c, anon);
    n.rules += rules;
    let named = 0;
    for (const s of t.sets) {
      if (s.set.kind === 'map') n.maps++;
      else n.sets++;
      named++;
      n.elements += s.elements.length;
    }
    n.anonymousSets += anon.sets;
    n.elements += anon.elements;
    const sets = named + anon.sets;
    const elements = anon.elements + t.sets.reduce((k, s) => k + s.elements.length, 0);
    n.setSquares += sets ** 2;
    n.setSquareObjects += sets ** 2 * (t.chains.length + rules + sets + elements);
  }
  return n;
}
