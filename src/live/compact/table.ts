// The live tables in a compact form: a few strings and typed arrays instead of a quarter
// of a million rule objects. It is cheap to hand from a worker thread to the main thread
// (a structured clone of many small objects costs about as much as reading them), and the
// diff reads it in place, its chains in the order nft listed them: an unchanged chain is
// one string comparison, and rule objects are made only for chains that changed.
//
// Each rule is kept as the text ruleBodyText prints for it, in the line the diff's table
// prints for it (RULE_INDENT, the text, a newline), so that a chain's rules compare with
// the wanted chain's lines as one string. A rule whose statements that text cannot stand
// for (one kproxc would not print, read by the checked reader) keeps its statements instead, and a
// foreign rule its set references, as checked/reader.ts reads them.
import { parseIP } from '../../net/ip.js';
import { rememberRuleKey, stmtsKey } from '../../nft/canonical.js';
import type { Family, Stmt } from '../../nft/expr.js';
import type { ElementLines } from './elements.js';
import { LiveReader, type LiveFilter, type LiveTable, type RuleSink } from '../checked/reader.js';
import { elementValueKey, printedRules, samePrintedRules, type LiveSet, type LiveTableView } from '../view.js';
import { ruleStmts, type BaseChainSpec, type DataType, type Element, type KeyPart, type NftSet, type Rule, type RuleBody, type Table } from '../../nft/objects.js';
import { keyString, type ChainContents } from '../../nft/ruleset.js';
import { RULE_INDENT } from '../../nft/nested-text.js';
import { ruleBodyText } from '../../nft/text.js';
import { readRuleText } from '../../nft/text-read.js';

/** A rule that is not simply its text. */
export interface OddRule {
  stmts?: Stmt[];
  foreign?: { setRefs: string[] };
}

/** One live table, compact. Plain data: what a worker thread posts. */
export interface CompactTable {
  table: Table;
  /** Chain names in the order nft listed the chains, one per line. */
  chainNames: string;
  /** Base chains: [chain index, spec]. */
  bases: [number, BaseChainSpec][];
  /** Chain i holds rules ruleFirst[i] up to ruleFirst[i] + ruleCount[i]. */
  ruleFirst: Int32Array;
  ruleCount: Int32Array;
  /** Per rule, in the listing's order (each chain's rules come together in it). */
  handles: Float64Array;
  /**
   * Every rule's line (RULE_INDENT, its text, a newline; nothing for an odd rule), then its
   * comment; a rule's line starts where the rule before ends.
   */
  texts: string;
  textEnd: Int32Array;
  commentEnd: Int32Array;
  hasComment: Uint8Array;
  /** Rules that are not simply their text: [rule index, rule]. */
  odd: [number, OddRule][];
  /** The sets and maps, sorted by name, as JSON. */
  sets: string;
  /** Their elements' keys (keyString) and values (elementValueKey), one per line, set after set. */
  elementCounts: Int32Array;
  elementKeys: string;
  elementValues: string;
}

// Pieces are joined into one string whenever this many characters are waiting.
const JOIN_CHARS = 1 << 15;

/**
 * Text appended piece by piece. The pieces are joined every JOIN_CHARS characters, so no
 * string per piece lives on (a quarter of a million rule texts would be copied by every
 * young-generation collection), and no call into the engine is made per piece.
 */
class TextStore {
  private readonly joined: string[] = [];
  private waiting: string[] = [];
  private waitingLength = 0;
  private used = 0;

  get length(): number {
    return this.used;
  }

  add(s: string): void {
    this.waiting.push(s);
    this.used += s.length;
    if ((this.waitingLength += s.length) >= JOIN_CHARS) this.joinWaiting();
  }

  done(): string {
    this.joinWaiting();
    return this.joined.join('');
  }

  private joinWaiting(): void {
    if (this.waiting.length === 0) return;
    this.joined.push(this.waiting.join(''));
    this.waiting = [];
    this.waitingLength = 0;
  }
}

/** Growable typed arrays, one entry per rule. */
class RuleColumns {
  size = 0;
  handles = new Float64Array(1024);
  textEnd = new Int32Array(1024);
  commentEnd = new Int32Array(1024);
  hasComment = new Uint8Array(1024);

  push(handle: number, textEnd: number, commentEnd: number, hasComment: boolean): void {
    if (this.size === this.handles.length) this.grow();
    const i = this.size++;
    this.handles[i] = handle;
    this.textEnd[i] = textEnd;
    this.commentEnd[i] = commentEnd;
    this.hasComment[i] = hasComment ? 1 : 0;
  }

  private grow(): void {
    const n = 2 * this.handles.length;
    const more = <T extends Float64Array | Int32Array | Uint8Array>(a: T, b: T): T => (b.set(a), b);
    this.handles = more(this.handles, new Float64Array(n));
    this.textEnd = more(this.textEnd, new Int32Array(n));
    this.commentEnd = more(this.commentEnd, new Int32Array(n));
    this.hasComment = more(this.hasComment, new Uint8Array(n));
  }

  /** The used part of each column. */
  trimmed(): Pick<CompactTable, 'handles' | 'textEnd' | 'commentEnd' | 'hasComment'> {
    const n = this.size;
    return { handles: this.handles.slice(0, n), textEnd: this.textEnd.slice(0, n), commentEnd: this.commentEnd.slice(0, n), hasComment: this.hasComment.slice(0, n) };
  }
}

/** The rules of one family's table as they are read. */
class FamilyRules {
  readonly columns = new RuleColumns();
  readonly store: TextStore;
  readonly odd: [number, OddRule][] = [];
  /** Each chain's rules come together: run i starts at runFirst[i] and ends where run i + 1 starts. */
  private readonly runOf = new Map<ChainContents, number>();
  private readonly runFirst: number[] = [];
  private lastChain?: ChainContents;
  /** A chain's rules did not come together: this table cannot be kept compactly. */
  scattered = false;

  constructor() {
    this.store = new TextStore();
  }

  /** The rules of a chain: where they start and how many (none: [0, 0]). */
  rulesOf(chain: ChainContents): [number, number] {
    const run = this.runOf.get(chain);
    if (run === undefined) return [0, 0];
    const end = run + 1 < this.runFirst.length ? this.runFirst[run + 1] : this.columns.size;
    return [this.runFirst[run], end - this.runFirst[run]];
  }

  add(chain: ChainContents, handle: number, comment: string | undefined, text: string, odd?: OddRule): void {
    if (chain !== this.lastChain) {
      if (this.runOf.has(chain)) this.scattered = true;
      this.runOf.set(chain, this.runFirst.length);
      this.runFirst.push(this.columns.size);
      this.lastChain = chain;
    }
    if (odd) this.odd.push([this.columns.size, odd]);
    else this.store.add(`${RULE_INDENT}${text}\n`);
    const textEnd = this.store.length;
    if (comment !== undefined) this.store.add(comment);
    this.columns.push(handle, textEnd, this.store.length, comment !== undefined);
  }
}

/** Gathers the rules LiveReader reads, per family, for the compact tables. */
class CompactRules implements RuleSink {
  readonly families = new Map<Family, FamilyRules>();
  /** Elements read from their text, per family and set. */
  readonly elements = { ip: new Map<string, ElementLines>(), ip6: new Map<string, ElementLines>() };

  of(family: Family): FamilyRules {
    let f = this.families.get(family);
    if (!f) this.families.set(family, (f = new FamilyRules()));
    return f;
  }

  textRule(family: Family, chain: ChainContents, handle: number, comment: string | undefined, text: string): void {
    this.of(family).add(chain, handle, comment, text);
  }

  elementLines(family: Family, set: string, lines: ElementLines): void {
    this.elements[family].set(set, lines);
  }

  rule(family: Family, chain: ChainContents, rule: Rule): void {
    const rules = this.of(family);
    if ('foreign' in rule.body) {
      rules.add(chain, rule.handle!, rule.comment, '', { foreign: rule.body.foreign });
      return;
    }
    const stmts = ruleStmts(rule);
    const text = textStandingFor(stmts, rule.comment, family);
    if (text === null) rules.add(chain, rule.handle!, rule.comment, '', { stmts });
    else rules.add(chain, rule.handle!, rule.comment, text);
  }
}

/** The text of the statements, when reading it back gives statements with the same key. */
function textStandingFor(stmts: Stmt[], comment: string | undefined, family: Family): string | null {
  let text: string;
  try {
    text = ruleBodyText(stmts);
  } catch {
    return null; // a string kproxc would not print
  }
  // A rule's line holds no line break (and a block of lines is one line per rule).
  if (text.includes('\n')) return null;
  const back = readRuleText(text);
  return back && stmtsKey(back, comment, family) === stmtsKey(stmts, comment, family) ? text : null;
}

function compactTable(t: LiveTable, rules: FamilyRules, elements: Map<string, ElementLines>): CompactTable | null {
  // In the order listed: the order of the rules, and the order the diff walks them in.
  const chains = t.chains;
  const names = chains.map((c) => c.chain.name);
  // One name per line: a name holding a newline (made by hand) cannot be kept so.
  if (rules.scattered || names.some((n) => n.includes('\n'))) return null;
  const ruleFirst = new Int32Array(names.length);
  const ruleCount = new Int32Array(names.length);
  const bases: [number, BaseChainSpec][] = [];
  chains.forEach((c, i) => {
    [ruleFirst[i], ruleCount[i]] = rules.rulesOf(c);
    if (c.chain.base) bases.push([i, c.chain.base]);
  });
  // Elements read from their text come as lines; those read as JSON, as objects.
  const lines = t.sets.map((s) => elements.get(s.set.name) ?? { keys: s.elements.map((e) => keyString(e.key)), values: s.elements.map(elementValueKey) });
  return {
    table: t.table,
    chainNames: names.join('\n'),
    bases,
    ruleFirst,
    ruleCount,
    ...rules.columns.trimmed(),
    texts: rules.store.done(),
    odd: rules.odd,
    sets: JSON.stringify(t.sets.map((s) => s.set)),
    elementCounts: Int32Array.from(lines, (l) => l.keys.length),
    elementKeys: lines.flatMap((l) => l.keys).join('\n'),
    elementValues: lines.flatMap((l) => l.values).join('\n'),
  };
}

/** The result of a compact read: the tables, or the problems that need the checked reader. */
export interface CompactRead {
  tables: CompactTable[];
  /** Families of our tables with a problem, and 'any' for one outside them. */
  problemsIn: (Family | 'any')[];
  /** False when the listing could not be read compactly at all. */
  readable: boolean;
}

/**
 * Reads a listing with `read` into compact tables.
 * A listing with problems (or one the compact form cannot hold) is for the caller to read
 * again by the checked reader, for diagnostics with positions: the compact read does not know them.
 */
export function readCompact(read: (reader: LiveReader) => boolean, filter: LiveFilter): CompactRead {
  const sink = new CompactRules();
  const reader = new LiveReader('', filter, sink);
  if (!read(reader)) return { tables: [], problemsIn: [], readable: false };
  const problemsIn = [...reader.problemsIn];
  if (reader.problemsIn.has('any')) return { tables: [], problemsIn, readable: true };
  const tables: CompactTable[] = [];
  // A table with a problem is left out: if the caller needs it, it reads the listing again.
  for (const t of reader.tablesRead().filter((t) => !reader.problemsIn.has(t.table.family))) {
    const c = compactTable(t, sink.of(t.table.family), sink.elements[t.table.family]);
    if (!c) return { tables: [], problemsIn: [], readable: false };
    tables.push(c);
  }
  return { tables, problemsIn, readable: true };
}

// ---- the diff's view of a compact table ------------------------------------------------

const NONE: string[] = [];
// A rule's text within its line: past the indent, before the newline.
const LINE_START = RULE_INDENT.length;
const LINE_END = 1;

class CompactSet implements LiveSet {
  constructor(
    readonly set: NftSet,
    readonly keys: string[],
    private readonly values: string[],
  ) {}
  valueKey(i: number): string {
    return this.values[i];
  }
  element(i: number): Element {
    const [value, comment] = JSON.parse(this.values[i]) as [Element['value'] | null, string | null];
    const el: Element = { set: this.set.name, key: keyParts(this.keys[i], this.set.keyType) };
    if (value) el.value = value;
    if (comment !== null) el.comment = comment;
    return el;
  }
}

/** A key back from its keyString: the parts are formatted values, which read back exactly. */
function keyParts(key: string, types: DataType[]): KeyPart[] {
  const words = key.split(' . ');
  return types.map((type, i) => {
    const w = words[i];
    if (type === 'inet_service') return { t: 'port', n: Number(w) };
    if (type === 'inet_proto') return { t: 'proto', name: w as 'tcp' | 'udp' | 'sctp' };
    if (type === 'integer') return { t: 'int', n: Number(w) };
    return { t: 'ip', ip: parseIP(w)! };
  });
}

const lines = (text: string): string[] => (text === '' ? [] : text.split('\n'));

class CompactView implements LiveTableView {
  readonly table: Table;
  readonly sets: LiveSet[];
  private readonly names: string[];
  private readonly bases: Map<number, BaseChainSpec>;
  private readonly odd: Map<number, OddRule>;
  private readonly oddIndexes: number[];
  private readonly made = new Map<number, Rule[]>();

  constructor(private readonly c: CompactTable) {
    this.table = c.table;
    this.names = lines(c.chainNames);
    this.bases = new Map(c.bases);
    this.odd = new Map(c.odd);
    this.oddIndexes = c.odd.map(([i]) => i).sort((a, b) => a - b);
    const keys = lines(c.elementKeys);
    const values = lines(c.elementValues);
    let at = 0;
    this.sets = (JSON.parse(c.sets) as NftSet[]).map((set, i) => {
      const n = c.elementCounts[i];
      at += n;
      return new CompactSet(set, n === 0 ? NONE : keys.slice(at - n, at), n === 0 ? NONE : values.slice(at - n, at));
    });
  }

  get chainCount(): number {
    return this.names.length;
  }

  /** The chains are kept in the order listed. */
  listedOrder(): Int32Array {
    return Int32Array.from({ length: this.names.length }, (_, i) => i);
  }

  chainName(i: number): string {
    return this.names[i];
  }

  chainBase(i: number): BaseChainSpec | undefined {
    return this.bases.get(i);
  }

  ruleCount(i: number): number {
    return this.c.ruleCount[i];
  }

  printsAs(i: number, chain: ChainContents): boolean {
    const c = this.c;
    const first = c.ruleFirst[i];
    const want = printedRules(chain);
    if (want.count !== c.ruleCount[i]) return false;
    if (want.count === 0) return true;
    if (this.oddIn(first, want.count)) return samePrintedRules(chain.rules, this.rules(i));
    const { texts, textEnd, commentEnd, hasComment } = c;
    const block = want.block?.() ?? null;
    if (block !== null && !this.commentIn(first, want.count)) {
      // Both are the rules' lines one after another: equal as wholes, equal line by line.
      const start = first === 0 ? 0 : commentEnd[first - 1];
      const end = textEnd[first + want.count - 1];
      return end - start === block.length && texts.slice(start, end) === block;
    }
    for (let k = 0; k < want.count; k++) {
      const r = first + k;
      const text = want.text(k);
      const start = (r === 0 ? 0 : commentEnd[r - 1]) + LINE_START;
      const end = textEnd[r] - LINE_END;
      // A slice compared whole is cheaper than startsWith at an offset.
      if (end - start !== text.length || texts.slice(start, end) !== text) return false;
      const comment = want.comment(k);
      if (comment === undefined ? hasComment[r] === 1 : hasComment[r] !== 1 || texts.slice(textEnd[r], commentEnd[r]) !== comment) return false;
    }
    return true;
  }

  rules(i: number): Rule[] {
    let list = this.made.get(i);
    if (!list) {
      const first = this.c.ruleFirst[i];
      list = [];
      for (let r = first; r < first + this.c.ruleCount[i]; r++) list.push(this.rule(r, this.names[i]));
      this.made.set(i, list);
    }
    return list;
  }

  /** Whether any of rules [first, first + count) has a comment. */
  private commentIn(first: number, count: number): boolean {
    const has = this.c.hasComment;
    for (let r = first; r < first + count; r++) if (has[r] === 1) return true;
    return false;
  }

  /** Whether any of rules [first, first + count) is not simply its text. */
  private oddIn(first: number, count: number): boolean {
    const ix = this.oddIndexes;
    if (ix.length === 0) return false;
    let lo = 0;
    let hi = ix.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ix[mid] < first) lo = mid + 1;
      else hi = mid;
    }
    return lo < ix.length && ix[lo] < first + count;
  }

  private rule(r: number, chain: string): Rule {
    const c = this.c;
    const odd = this.odd.get(r);
    const start = r === 0 ? 0 : c.commentEnd[r - 1];
    const body: RuleBody = !odd ? { text: c.texts.slice(start + LINE_START, c.textEnd[r] - LINE_END) } : odd.foreign ? { foreign: odd.foreign } : { stmts: odd.stmts ?? [] };
    const rule: Rule = { chain, body, handle: c.handles[r] };
    if (c.hasComment[r] === 1) rule.comment = c.texts.slice(c.textEnd[r], c.commentEnd[r]);
    if ('foreign' in body) rememberRuleKey(rule, `foreign rule ${rule.handle}`);
    return rule;
  }
}

/** A compact table as the diff sees it. */
export function compactView(c: CompactTable): LiveTableView {
  return new CompactView(c);
}
