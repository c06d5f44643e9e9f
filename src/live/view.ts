// What the diff asks of a live table: its chains (how many rules, whether they print as the
// wanted ones, and the rules themselves when they do not) and its sets (element keys and
// values). A table read into objects (checked/reader.ts readLive) answers from its objects; a table
// read compactly (compact/table.ts) answers from its texts and makes objects only of the
// few chains and elements a transaction names.
import { ruleStmts, type BaseChainSpec, type Element, type NftSet, type Rule, type Table } from '../nft/objects.js';
import { keyString, type ChainContents, type PrintedRules, type TableContents } from '../nft/ruleset.js';
import { ruleBodyText } from '../nft/text.js';

export interface LiveSet {
  readonly set: NftSet;
  /** The keys of its elements (keyString), sorted as the reader sorts them. */
  readonly keys: string[];
  /** What element i holds besides its key (elementValueKey). */
  valueKey(i: number): string;
  element(i: number): Element;
}

/**
 * A live table's chains by index (in name order, or another: the compact view keeps the
 * order nft listed them, and listedOrder gives that order where it is known), and its
 * sets. By index, because a large table has a hundred thousand chains: an object for each
 * costs more than comparing them.
 */
export interface LiveTableView {
  readonly table: Table;
  readonly chainCount: number;
  chainName(i: number): string;
  /** Chain i's hook, type, priority and policy, when it is a base chain. */
  chainBase(i: number): BaseChainSpec | undefined;
  ruleCount(i: number): number;
  /** Whether chain i's rules print as the wanted chain's, in order and with the same comments. */
  printsAs(i: number, want: ChainContents): boolean;
  /** Chain i's rules, with their handles. */
  rules(i: number): Rule[];
  /** The chains (their indexes) in the order nft listed them, where that is known. */
  listedOrder?(): ArrayLike<number>;
  readonly sets: LiveSet[];
}

/** What an element holds besides its key: its verdict or data (maps) and its comment. */
export function elementValueKey(e: Element): string {
  return JSON.stringify([e.value ?? (e.data ? keyString(e.data) : null), e.comment ?? null]);
}

/** A rule's statements as nft text: kept as text, or printed from its statements. */
export function ruleText(r: Rule): string {
  return 'text' in r.body ? r.body.text : ruleBodyText(ruleStmts(r));
}

/** A chain's rules as PrintedRules, kept printed or not. */
export function printedRules(c: ChainContents): PrintedRules {
  if (c.printed) return c.printed;
  const rules = c.rules;
  return { count: rules.length, text: (k) => ruleText(rules[k]), comment: (k) => rules[k].comment };
}

/**
 * Rules that print as the same nft text are the same rules: the text is what nft reads.
 * Most chains of a large table are unchanged, and printing is far cheaper than making
 * their canonical keys; rules that print differently (nft's own spellings, a changed
 * rule) are compared by key.
 */
export function samePrintedRules(want: Rule[], have: Rule[]): boolean {
  if (want.length !== have.length) return false;
  try {
    for (let i = 0; i < want.length; i++) {
      const w = want[i];
      const h = have[i];
      if ('foreign' in h.body || w.comment !== h.comment || ruleText(w) !== ruleText(h)) return false;
    }
  } catch {
    return false; // a live string kproxc would not print (hand-made): compared by key instead
  }
  return true;
}

class ContentsView implements LiveTableView {
  readonly table: Table;
  readonly sets: LiveSet[];
  private readonly chains: ChainContents[];

  constructor(t: TableContents) {
    this.table = t.table;
    this.chains = t.chains;
    this.sets = t.sets.map((s) => new ContentsSet(s.set, s.elements));
  }
  get chainCount(): number {
    return this.chains.length;
  }
  chainName(i: number): string {
    return this.chains[i].chain.name;
  }
  chainBase(i: number): BaseChainSpec | undefined {
    return this.chains[i].chain.base;
  }
  ruleCount(i: number): number {
    return this.chains[i].rules.length;
  }
  printsAs(i: number, want: ChainContents): boolean {
    return samePrintedRules(want.rules, this.chains[i].rules);
  }
  rules(i: number): Rule[] {
    return this.chains[i].rules;
  }
}

class ContentsSet implements LiveSet {
  readonly keys: string[];
  constructor(
    readonly set: NftSet,
    private readonly elements: Element[],
  ) {
    this.keys = elements.map((e) => keyString(e.key));
  }
  valueKey(i: number): string {
    return elementValueKey(this.elements[i]);
  }
  element(i: number): Element {
    return this.elements[i];
  }
}

/** A live table read into objects, as the diff sees it. */
export function contentsView(t: TableContents): LiveTableView {
  return new ContentsView(t);
}
