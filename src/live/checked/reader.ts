// The live state: `nft -j list ruleset` (or `list table`) read into the objects the
// compiler builds, for the tables kproxc owns only (family ip/ip6, our table name). Every
// other table is skipped unread. Inside our tables everything must be something kproxc
// writes; anything else is reported, never guessed at.
//
// What the listing cannot show (nft 1.0.6): table and chain comments and the set flag
// "dynamic". Elements of sets with timeouts are the kernel's dynamic state (session
// affinity) and are not read, but for the sets the filter names (managedSets: those whose
// stale members the diff removes).
import { UserInputError, type Diagnostic } from '../../diag/diagnostic.js';
import type { Family } from '../../nft/expr.js';
import { rememberRuleKey } from '../../nft/canonical.js';
import { OuterShapeError, splitItems, type ItemText } from './split.js';
import { isObj, readChain, readElement, readSet, readStmts, Unreadable } from './json.js';
import type { ElementLines } from '../compact/elements.js';
import type { Json } from '../../nft/expr-json.js';
import type { Chain, NftSet, Rule } from '../../nft/objects.js';
import { compareKeys, type ChainContents, type SetContents, type TableContents } from '../../nft/ruleset.js';
import { inNameOrder } from '../../nft/sort-names.js';

export interface LiveFilter {
  tableName: string;
  families: Family[];
  /**
   * Sets with timeouts whose members are read: the sets the wanted tables manage
   * (SetContents.managed). The members of other such sets are dynamic state, not read.
   */
  managedSets?: readonly string[];
}

/** A live table: each rule carries its handle, and the chains are in the order nft listed them. */
export type LiveTable = TableContents;

/**
 * Where the rules of our tables go as they are read: by default into their chain's list;
 * a compact reader (compact/table.ts) keeps them in its own form instead, and takes the
 * elements of sets read straight from their text too.
 */
export interface RuleSink {
  /** A rule of `chain` read from its parsed JSON: statements, or a foreign rule. */
  rule(family: Family, chain: ChainContents, rule: Rule): void;
  /** A rule of `chain` read straight from its text (compact/scan.ts), as ruleBodyText prints it. */
  textRule(family: Family, chain: ChainContents, handle: number, comment: string | undefined, text: string): void;
  /** The elements of a set, read straight from their text (compact/elements.ts). */
  elementLines(family: Family, set: string, lines: ElementLines): void;
}

const MAX_DIAGNOSTICS = 50;
// How far on from the last rule's chain a rule's chain is looked for in the listed order.
const NEARBY_CHAINS = 16;
const NO_RULES: Rule[] = Object.freeze([]) as unknown as Rule[];
// Kinds of objects nft lists inside a table that kproxc never creates.
const KNOWN_OTHER_KINDS = ['flowtable', 'counter', 'quota', 'ct helper', 'limit', 'ct timeout', 'ct expectation', 'secmark', 'synproxy', 'element'];

class TableReader {
  present = false;
  readonly chains = new Map<string, ChainContents>();
  readonly sets = new Map<string, SetContents>();
  /** Chains already reported as unreadable: their rules are not reported again. */
  readonly refused = new Set<string>();
  /** The chains in the order listed. */
  private readonly listed: ChainContents[] = [];
  /** The chain of the last rule taken from its text, and its place in `listed` (-1: not known). */
  private lastRuleChain?: ChainContents;
  private lastRuleAt = -1;

  constructor(readonly family: Family, readonly name: string) {}

  addChain(chain: Chain, rules: Rule[]): void {
    if (this.chains.has(chain.name)) throw new Unreadable('chain listed twice');
    const c = { chain, rules };
    this.chains.set(chain.name, c);
    this.listed.push(c);
  }

  /**
   * The chain of a rule taken from its text. nft lists each chain's rules together, chain
   * after chain in the order it listed the chains: a rule's chain is most often the last
   * rule's, or the one listed after it, each found by one comparison of names instead of
   * hashing the name (a quarter of a million rules, a hundred thousand chains).
   */
  chainOfRule(name: string): ChainContents | undefined {
    const last = this.lastRuleChain;
    if (last !== undefined && name === last.chain.name) return last;
    const next = this.listed[this.lastRuleAt + 1];
    if (next !== undefined && name === next.chain.name) {
      this.lastRuleAt++;
      return (this.lastRuleChain = next);
    }
    const c = this.chains.get(name);
    if (c === undefined) return undefined;
    // Its place: a few chains on (chains without rules are not in the rules' order), else not known.
    const from = this.lastRuleAt + 2;
    const end = Math.min(from + NEARBY_CHAINS, this.listed.length);
    this.lastRuleAt = -1;
    for (let i = from; i < end && this.lastRuleAt < 0; i++) if (this.listed[i] === c) this.lastRuleAt = i;
    return (this.lastRuleChain = c);
  }

  finish(): LiveTable {
    return {
      table: { family: this.family, name: this.name },
      chains: this.listed,
      sets: inNameOrder(
        [...this.sets.values()].map((s) => ({ set: s.set, elements: s.elements.sort((a, b) => compareKeys(a.key, b.key)) })),
        (s) => s.set.name,
      ),
    };
  }
}

interface Located {
  kind: string;
  object?: string;
}

export class LiveReader {
  private readonly tables = new Map<Family, TableReader>();
  readonly diagnostics: Diagnostic[] = [];
  /** The families of our tables that a problem was found in; 'any' for one outside them. */
  readonly problemsIn = new Set<Family | 'any'>();
  private omitted = 0;

  constructor(
    private readonly file: string,
    private readonly filter: LiveFilter,
    private readonly sink?: RuleSink,
  ) {
    for (const f of filter.families) this.tables.set(f, new TableReader(f, filter.tableName));
  }

  private report(item: ItemText, where: Located, message: string, field?: string, family?: Family): void {
    this.problemsIn.add(family ?? 'any');
    if (this.diagnostics.length >= MAX_DIAGNOSTICS) {
      this.omitted++;
      return;
    }
    this.diagnostics.push({
      severity: 'error',
      pos: { file: this.file, line: item.line, col: item.col },
      kind: where.kind,
      object: where.object,
      field,
      message,
    });
  }

  /** One entry of the "nftables" array. */
  add(item: ItemText): void {
    let v: unknown;
    try {
      v = JSON.parse(item.text);
    } catch (e) {
      this.report(item, { kind: 'nftables' }, `not JSON: ${(e as Error).message}`);
      return;
    }
    this.addParsed(v, item);
  }

  /** One entry, parsed already; `item` says where it stands for diagnostics. */
  addParsed(v: unknown, item: ItemText): void {
    if (!isObj(v) || Object.keys(v).length !== 1 || !isObj(v[Object.keys(v)[0]])) {
      this.report(item, { kind: 'nftables' }, 'each entry must be an object with one key whose value is an object, as nft prints');
      return;
    }
    const kind = Object.keys(v)[0];
    const body = v[kind] as { [k: string]: Json };
    if (kind === 'metainfo') {
      if (body.json_schema_version !== undefined && body.json_schema_version !== 1) {
        this.report(item, { kind }, `json_schema_version ${JSON.stringify(body.json_schema_version)} is not 1, the one kproxc reads`);
      }
      return;
    }
    const tableName = kind === 'table' ? body.name : body.table;
    if (typeof body.family !== 'string' || typeof tableName !== 'string') {
      this.report(item, { kind }, `not nft's schema: a ${kind} needs "family" and "${kind === 'table' ? 'name' : 'table'}"`);
      return;
    }
    const t = tableName === this.filter.tableName ? this.tables.get(body.family as Family) : undefined;
    if (!t) return; // not ours: never read
    try {
      this.addOwned(t, kind, body);
    } catch (e) {
      if (!(e instanceof Unreadable)) throw e;
      if (kind === 'chain' && typeof body.name === 'string') t.refused.add(body.name);
      if (kind === 'rule' && t.refused.has(body.chain as string)) return;
      const name = kind === 'rule' ? body.chain : body.name;
      const object = typeof name === 'string' ? name : undefined;
      const handle = kind === 'rule' && typeof body.handle === 'number' ? `rule handle ${body.handle}: ` : '';
      this.report(item, { kind, object }, `${handle}${e.message}; kproxc cannot diff a table holding this (replace it with \`kproxc compile\`)`, e.field, t.family);
    }
  }

  private addOwned(t: TableReader, kind: string, body: { [k: string]: Json }): void {
    const tableRef = `table ${t.family} ${t.name}`;
    if (kind === 'table') {
      if (body.flags !== undefined) throw new Unreadable(`table flags ${JSON.stringify(body.flags)} are not ones kproxc writes`, 'flags');
      t.present = true;
      return;
    }
    if (!t.present) throw new Unreadable(`listed before ${tableRef}: give the output of \`nft -j list ruleset\` or \`nft -j list table\``);
    switch (kind) {
      case 'chain':
        this.addChain(t, readChain(body));
        return;
      case 'set':
      case 'map':
        this.addSet(t, kind, body);
        return;
      case 'rule':
        this.addRule(t, body);
        return;
      default:
        throw new Unreadable(
          KNOWN_OTHER_KINDS.includes(kind) ? `a ${kind} in ${tableRef} is not something kproxc writes` : `unknown object kind "${kind}"`,
        );
    }
  }

  private addChain(t: TableReader, chain: Chain): void {
    // With a sink the rules go there: the chains of a large table share one empty list.
    t.addChain(chain, this.sink ? NO_RULES : []);
  }

  /**
   * A chain with nothing but its family, table, name and handle (compact/scan.ts read it from
   * its text), taken as its object from JSON.parse would be. False when it is ours but
   * cannot simply be taken (its table not listed yet, or listed twice): the caller then
   * hands over the object, and the problem is reported as usual.
   */
  takePlainChain(family: string, table: string, name: string): boolean {
    const t = table === this.filter.tableName ? this.tables.get(family as Family) : undefined;
    if (!t) return true; // not ours: never read
    if (!t.present || t.chains.has(name)) return false;
    this.addChain(t, { name });
    return true;
  }

  /**
   * The elements of a set whose item (without them) was just handed over, read straight
   * from their text by compact/scan.ts. A set that is not ours, or not read, ignores them.
   */
  takeElementLines(family: string, table: string, set: string, lines: ElementLines): void {
    const t = table === this.filter.tableName ? this.tables.get(family as Family) : undefined;
    if (t?.sets.has(set)) this.sink?.elementLines(t.family, set, lines);
  }

  private addSet(t: TableReader, kind: 'set' | 'map', body: { [k: string]: Json }): void {
    const set: NftSet = readSet(kind, body);
    if (t.sets.has(set.name)) throw new Unreadable(`${kind} listed twice`);
    const contents: SetContents = { set, elements: [] };
    // Members of a set with timeouts are dynamic state (session affinity): not read, but
    // those of a managed set, whose stale members the diff removes.
    const read = !set.flags?.includes('timeout') || this.filter.managedSets?.includes(set.name) === true;
    if (read && body.elem !== undefined) {
      if (!Array.isArray(body.elem)) throw new Unreadable('"elem" must be an array', 'elem');
      body.elem.forEach((e, i) => contents.elements.push(readElement(e, set, `elem[${i}]`)));
    }
    t.sets.set(set.name, contents);
  }

  private addRule(t: TableReader, body: { [k: string]: Json }): void {
    const chainName = body.chain;
    if (typeof chainName !== 'string') throw new Unreadable('"chain" must be a string', 'chain');
    const c = t.chains.get(chainName);
    if (!c) throw new Unreadable(`rule of chain ${chainName}, which is not listed before it`);
    for (const k of Object.keys(body)) {
      if (!['family', 'table', 'chain', 'handle', 'comment', 'expr'].includes(k)) throw new Unreadable(`unexpected key "${k}"`);
    }
    if (typeof body.handle !== 'number' || !Number.isInteger(body.handle)) throw new Unreadable('"handle" must be an integer', 'handle');
    if (body.comment !== undefined && typeof body.comment !== 'string') throw new Unreadable('"comment" must be a string', 'comment');
    let rule: Rule;
    try {
      // Its key, if the diff needs one, is made from these statements (ruleKey): they
      // were just checked to write back as the listing's canonical form.
      const { stmts } = readStmts(body.expr ?? null, t.family);
      rule = { chain: chainName, body: { stmts }, handle: body.handle };
      if (body.comment !== undefined) rule.comment = body.comment as string;
    } catch (e) {
      if (!(e instanceof Unreadable) || !Array.isArray(body.expr)) throw e;
      // Drift: a rule changed by hand to something kproxc does not write. It is a rule of
      // our chain all the same, so the diff repairs it instead of refusing the table.
      rule = { chain: chainName, body: { foreign: { setRefs: setNamesIn(body.expr) } }, handle: body.handle };
      rememberRuleKey(rule, `foreign rule ${body.handle}`);
    }
    if (this.sink) this.sink.rule(t.family, c, rule);
    else c.rules.push(rule);
  }

  /**
   * A rule of our table (of `family`) read straight from its text by compact/scan.ts; false
   * (nothing taken) when it is not simply a rule of a chain listed before it: such an item
   * is then read as JSON, which reports what is wrong with it.
   */
  takeTextRule(family: Family, chain: string, handle: number, comment: string | undefined, text: string): boolean {
    const t = this.tables.get(family);
    if (!t || !t.present || !this.sink) return false;
    const c = t.chainOfRule(chain);
    if (!c) return false;
    this.sink.textRule(t.family, c, handle, comment, text);
    return true;
  }

  /** The tables we own that the listing holds; throws UserInputError with every problem. */
  finish(): LiveTable[] {
    if (this.omitted > 0) {
      const last = this.diagnostics[this.diagnostics.length - 1];
      this.diagnostics.push({ ...last, kind: undefined, object: undefined, field: undefined, message: `and ${this.omitted} more problems` });
    }
    if (this.diagnostics.length) throw new UserInputError(this.diagnostics);
    return this.tablesRead();
  }

  /** The tables we own that the listing holds, problems or not: see problemsIn. */
  tablesRead(): LiveTable[] {
    return [...this.tables.values()].filter((t) => t.present).map((t) => t.finish());
  }
}

/** Every "@set" a raw rule names, so that a set it holds is not deleted before it. */
function setNamesIn(j: Json): string[] {
  if (typeof j === 'string') return j.startsWith('@') ? [j.slice(1)] : [];
  if (Array.isArray(j)) return j.flatMap(setNamesIn);
  if (j !== null && typeof j === 'object') return Object.values(j).flatMap(setNamesIn);
  return [];
}

/**
 * Reads a whole listing given as chunks of text, item by item, each with its position: the
 * checked reader, which reports every problem where it is.
 */
export function readLive(chunks: Iterable<string>, file: string, filter: LiveFilter): LiveTable[] {
  const reader = new LiveReader(file, filter);
  try {
    for (const item of splitItems(chunks)) reader.add(item);
  } catch (e) {
    if (!(e instanceof OuterShapeError)) throw e;
    reader.diagnostics.push({
      severity: 'error',
      pos: { file, line: e.line, col: e.col },
      message: `not a listing from \`nft -j list ruleset\`: ${e.message}`,
    });
  }
  return reader.finish();
}
