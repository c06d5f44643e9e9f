// The contents of one table, built with checks: every rule's chain exists, every jump,
// goto, @set and vmap names an object of the table, and no key is given two values.
// Chains stay in the order they were made (the order the output prints them and nft lists
// them); sets are sorted by name and elements by key.
import { forEachReference } from './references.js';
import { InternalError } from '../diag/diagnostic.js';
import { compareIP, formatIP, type IP } from '../net/ip.js';
import type { AddressPortRule } from './rule-template.js';
import { NameIndex } from './name-index.js';
import { inNameOrder } from './sort-names.js';
import type { Stmt, Verdict } from './expr.js';
import {
  type Chain,
  type Element,
  type KeyPart,
  type KeyRange,
  type NftSet,
  type NewRule,
  type Rule,
  type Table,
  makeChain,
  isUint32,
  makeElement,
  makeRule,
  makeSet,
} from './objects.js';

export interface SetContents {
  set: NftSet;
  elements: Element[]; // sorted by key
  /**
   * A data map filled only by key ranges (elementRange): its ranges in key order. Its
   * elements are then made on first use; the text writer prints the ranges.
   */
  keyRanges?: readonly KeyRange[];
  /** Set when the table's own rules write the set's members (see ManagedMembers). */
  managed?: ManagedMembers;
}

/**
 * A set whose members the table's own rules write from the packet path (dynamic state,
 * never written by the table itself): each member is keyed by a client's address, then by
 * parts that stand for what writes it (fast-load: an endpoint of a Service port, whose
 * rules update the set). `owners` maps those parts (keyString of the key after its first
 * part) to that owner's name, for every owner of the table; a member whose parts are not
 * among them was written for an owner that is gone.
 */
export interface ManagedMembers {
  readonly owners: ReadonlyMap<string, string>;
}

export interface ChainContents {
  chain: Chain;
  rules: Rule[]; // in order
  /**
   * Each rule's text and comment without the Rule objects, where the table kept its rules
   * printed (the diff's table, which reads them once to compare and makes the rules of
   * the few chains that changed).
   */
  printed?: PrintedRules;
}

export interface PrintedRules {
  readonly count: number;
  /** Rule k's statements as nft text (ruleBodyText). */
  text(k: number): string;
  comment(k: number): string | undefined;
  /**
   * All the rules' lines as printed, each RULE_INDENT, its text and a newline, as one
   * string, when they have no comments and lie together; else null. One comparison of
   * it stands for comparing every rule's text (none holds a newline).
   */
  block?(): string | null;
}

export interface TableContents {
  table: Table;
  /**
   * In the order made: the order the output prints them, and the order nft lists the
   * chains of a table it loaded from kproxc's output (a live table's are in the order listed).
   */
  chains: ChainContents[];
  sets: SetContents[]; // sorted by name
}

export function keyString(key: KeyPart[]): string {
  return key.map((p) => (p.t === 'ip' ? formatIP(p.ip) : p.t === 'proto' ? p.name : String(p.n))).join(' . ');
}

/**
 * An element's key as a string of character codes that sorts as compareKeys orders the
 * keys, and is equal only for equal keys: each part is its kind ('int' < 'ip' < 'port' <
 * 'proto', as compareKeys compares kinds), then an integer's four bytes, an address's
 * family and bytes, a port's two bytes, or a protocol's rank by name. Sets are sorted by
 * it with the default sort, without a comparator call per comparison.
 */
export function elementSortKey(key: KeyPart[]): string {
  let out = '';
  for (const p of key) {
    if (p.t === 'ip') {
      const b = p.ip.bytes;
      out += String.fromCharCode(0, p.ip.family, b[0], b[1], b[2], b[3]);
      for (let i = 4; i < b.length; i++) out += String.fromCharCode(b[i]);
    } else if (p.t === 'port') {
      // A port out of range (makeElement refuses it) is kept apart from every valid one.
      out += isPort(p.n) ? String.fromCharCode(1, p.n >> 8, p.n & 0xff) : `\u0003${p.n}\u0000`;
    } else if (p.t === 'int') {
      // Below an address (whose second code is its family, 4 or 6), as 'int' < 'ip'; four bytes, high first.
      out += String.fromCharCode(0, 0, p.n >>> 24, (p.n >>> 16) & 0xff, (p.n >>> 8) & 0xff, p.n & 0xff);
    } else {
      const rank = PROTOCOL_RANK.indexOf(p.name);
      out += rank >= 0 ? String.fromCharCode(2, rank) : `\u0004${p.name}\u0000`;
    }
  }
  return out;
}

const isPort = (n: number) => Number.isInteger(n) && n >= 0 && n <= 65535;

// Protocols in the order of their names.
const PROTOCOL_RANK: string[] = ['sctp', 'tcp', 'udp'];

export function compareKeys(a: KeyPart[], b: KeyPart[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    let c = 0;
    if (x.t === 'ip' && y.t === 'ip') c = compareIP(x.ip, y.ip);
    else if ((x.t === 'port' && y.t === 'port') || (x.t === 'int' && y.t === 'int')) c = x.n - y.n;
    else if (x.t === 'proto' && y.t === 'proto') c = x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
    else c = x.t < y.t ? -1 : 1;
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export function verdictEquals(a: Verdict | undefined, b: Verdict | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind !== b.kind) return false;
  return !('target' in a) || a.target === (b as { target: string }).target;
}

export interface ElementConflict {
  existing: Element;
  rejected: Element;
}

/** A table once built and checked, for a RuleStore to finish. */
export interface BuiltTable {
  table: Table;
  /** The chains by number: in the order made. */
  chains: readonly Chain[];
  sets: SetContents[];
}

/**
 * What a TableBuilder keeps of each rule, and what it makes of the table at the end: the
 * rules' statements (StatementStore: JSON output, tracing), or their printed lines
 * (text-table.ts: TextStore for printing out, PrintedStore for the diff).
 */
export interface RuleStore<R> {
  /** Chain number `n` (the last) was made. */
  chainAdded(c: Chain, n: number): void;
  /** A checked rule of chain number `chain`. */
  keepRule(chain: number, r: NewRule): void;
  /**
   * A template's rule, from what the store kept of the template's first use; false when
   * it kept nothing (then the builder adds it as any rule, and calls templateAdded).
   */
  templateRule?(chain: number, t: AddressPortRule, ip: IP, port: number): boolean;
  /** The template's rule for `ip` and `port` was added as any rule. */
  templateAdded?(t: AddressPortRule, ip: IP, port: number): void;
  /** The table, every reference checked. */
  finish(t: BuiltTable): R;
}

/** A set as the builder holds it: its elements by elementSortKey, its key ranges (elementRange), the owners of its members. */
interface SetEntry {
  set: NftSet;
  elements: Map<string, Element>;
  ranges?: KeyRange[];
  owners?: Map<string, string>;
}

/**
 * The one table builder: the checks and bookkeeping every table needs, whatever its store
 * keeps of the rules. Chains are numbered in the order they are made; a rule is kept
 * against its chain's number.
 */
export class TableBuilder<R = unknown> {
  /** Chain name to its number; chainList holds the chains by number. */
  private readonly chainIndex = new NameIndex();
  private readonly chainList: Chain[] = [];
  /** Each set with its elements by elementSortKey, and the owners of its members when it is managed. */
  private readonly sets = new Map<string, SetEntry>();
  readonly conflicts: ElementConflict[] = [];
  /** References to objects not made yet, checked at the end: (referrer, where, kind, name) in a row. */
  private readonly pending: string[] = [];

  constructor(
    readonly table: Table,
    private readonly store: RuleStore<R>,
  ) {}

  /** Creates the chain, or returns the one of that name (kube-proxy's ensureChain). */
  chain(c: Chain): void {
    // Checked first: a chain refused is not in the index either.
    makeChain(c);
    const number = this.chainIndex.add(c.name);
    if (number < this.chainList.length) {
      if (JSON.stringify(this.chainList[number]) !== JSON.stringify(c)) {
        throw new InternalError(`chain ${c.name} defined twice with different properties`);
      }
      return;
    }
    this.chainList.push(c);
    // A new chain's rules mostly follow at once: they find its number without a lookup.
    this.lastRuleChain = c.name;
    this.lastRuleChainIndex = number;
    this.store.chainAdded(c, number);
  }

  hasChain(name: string): boolean {
    return this.chainIndex.has(name);
  }

  /** Whether a set or map of that name was declared: a caller that declares the same set often asks first. */
  hasSet(name: string): boolean {
    return this.sets.has(name);
  }

  set(s: NftSet): void {
    const existing = this.sets.get(s.name);
    if (existing) {
      if (JSON.stringify(existing.set) !== JSON.stringify(s)) {
        throw new InternalError(`${s.kind} ${s.name} defined twice with different properties`);
      }
      return;
    }
    this.sets.set(s.name, { set: makeSet(s), elements: new Map() });
  }

  /**
   * Records that `owner` (what the rules write for: an endpoint) writes the members of
   * `set` keyed by a client's address and `parts` (ManagedMembers). Two owners may not
   * write the same parts: they would share their clients.
   */
  manage(set: string, owner: string, parts: KeyPart[]): void {
    const s = this.sets.get(set);
    if (!s) throw new InternalError(`members of missing set ${set} managed`);
    if (parts.length !== s.set.keyType.length - 1) throw new InternalError(`managed members of ${set} have the wrong arity`);
    const key = keyString(parts);
    const owners = (s.owners ??= new Map());
    const known = owners.get(key);
    if (known === undefined) owners.set(key, owner);
    else if (known !== owner) throw new InternalError(`members ${key} of ${set} written by ${owner} are those of ${known}`);
  }

  rule(r: NewRule): void {
    const chain = this.ruleChainNumber(r.chain);
    makeRule(r);
    this.referrer = 'rule in';
    this.where = r.chain;
    for (const s of r.stmts) forEachReference(s, this.refChain, this.refSet);
    this.store.keepRule(chain, r);
  }

  /**
   * The rule of a template for one address and port (rule-template.ts). Its first use is
   * added as any rule, references and all; the others hold the same statements but for an
   * address and a port, and a store that kept the first may make them without checks.
   */
  templateRule(chain: string, t: AddressPortRule, ip: IP, port: number): void {
    const store = this.store;
    if (store.templateRule?.(this.ruleChainNumber(chain), t, ip, port)) return;
    this.rule({ chain, stmts: t.make(ip, port) });
    store.templateAdded?.(t, ip, port);
  }

  /** The table as the store makes it, after checking every reference. */
  finish(): R {
    this.checkReferences();
    return this.store.finish({ table: this.table, chains: this.chainList, sets: this.sortedSets() });
  }

  /** The number of the chain a rule is added to, which must exist. */
  private ruleChainNumber(name: string): number {
    // A chain's rules mostly come one after another: its number is looked up once for them.
    const chain = name === this.lastRuleChain ? this.lastRuleChainIndex : this.chainIndex.get(name);
    if (chain < 0) throw new InternalError(`rule added to missing chain ${name}`);
    this.lastRuleChain = name;
    this.lastRuleChainIndex = chain;
    return chain;
  }

  // No chain is named '' (makeChain checks names): it stands for none yet.
  private lastRuleChain = '';
  private lastRuleChainIndex = -1;

  // What the rule or element being added refers to must exist by the end: a reference to
  // an object not made yet (chains refer to chains made after them) is checked in finish().
  private referrer = '';
  private where = '';
  private readonly refChain = (name: string) => {
    if (!this.chainIndex.has(name)) this.pending.push(this.referrer, this.where, 'chain', name);
  };
  private readonly refSet = (name: string) => {
    if (!this.sets.has(name)) this.pending.push(this.referrer, this.where, 'set', name);
  };

  /**
   * Adds an element. The same key with the same value is kept once; the same key with
   * another value is refused (nft would fail the whole load with "File exists") and
   * recorded as a conflict for the caller to report.
   */
  element(e: Element): boolean {
    const s = this.sets.get(e.set);
    if (!s) throw new InternalError(`element added to missing set ${e.set}`);
    if ((s.set.kind === 'map' && !s.set.data) !== (e.value !== undefined) || (s.set.data !== undefined) !== (e.data !== undefined)) {
      throw new InternalError(`element of ${e.set} ${e.value || e.data ? 'has' : 'lacks'} a value`);
    }
    if (e.key.length !== s.set.keyType.length) throw new InternalError(`element key of ${e.set} has the wrong arity`);
    const k = elementSortKey(e.key);
    const existing = s.elements.get(k);
    if (existing) {
      if (verdictEquals(existing.value, e.value) && keysEqual(existing.data, e.data)) return true;
      this.conflicts.push({ existing, rejected: e });
      return false;
    }
    s.elements.set(k, makeElement(e));
    if (e.value && 'target' in e.value) {
      this.referrer = 'element of';
      this.where = e.set;
      this.refChain(e.value.target);
    }
    return true;
  }

  /**
   * Adds the elements `base : data[0]`, `base+1 : data[1]`, ... of a data map keyed by one
   * integer, whose caller has made sure no other element of the map has those keys (the
   * key ranges of fast-load's maps, claimed in key-ranges.ts). They are kept as one block:
   * at a hundred thousand elements, a key string and a map entry each were a tenth of a
   * compile. finish() checks the ranges apart all the same.
   */
  elementRange(set: string, base: number, data: KeyPart[][]): void {
    const s = this.sets.get(set);
    if (!s) throw new InternalError(`elements added to missing set ${set}`);
    if (s.set.kind !== 'map' || !s.set.data || s.set.keyType.length !== 1 || s.set.keyType[0] !== 'integer') {
      throw new InternalError(`key range added to ${set}, which is not a data map keyed by one integer`);
    }
    if (data.length === 0) return;
    if (!isUint32(base) || !isUint32(base + data.length - 1)) throw new InternalError(`key range ${base} + ${data.length} of ${set} out of 32 bits`);
    (s.ranges ??= []).push({ base, data });
  }

  private sortedSets(): SetContents[] {
    return inNameOrder([...this.sets.values()], (s) => s.set.name).map((s) => {
      if (s.ranges) {
        if (s.elements.size > 0 || s.owners) throw new InternalError(`${s.set.name} holds key ranges and single elements or managed members`);
        return new RangeSetContents(s.set, sortedRanges(s.set.name, s.ranges));
      }
      const keys = [...s.elements.keys()].sort();
      const contents: SetContents = { set: s.set, elements: keys.map((k) => s.elements.get(k)!) };
      if (s.owners) contents.managed = { owners: s.owners };
      return contents;
    });
  }

  private checkReferences(): void {
    const p = this.pending;
    for (let i = 0; i < p.length; i += 4) {
      const exists = p[i + 2] === 'chain' ? this.chainIndex.has(p[i + 3]) : this.sets.has(p[i + 3]);
      if (!exists) throw new InternalError(`${p[i]} ${p[i + 1]} refers to missing ${p[i + 2]} ${p[i + 3]}`);
    }
  }
}

/** Key ranges in key order (an integer's sort key is its four bytes high first: numeric order), checked apart. */
function sortedRanges(name: string, ranges: KeyRange[]): KeyRange[] {
  ranges.sort((a, b) => a.base - b.base);
  let end = 0;
  for (const { base, data } of ranges) {
    if (base < end) throw new InternalError(`key ranges of ${name} overlap at ${base}`);
    end = base + data.length;
  }
  return ranges;
}

/**
 * A data map filled by key ranges. Its elements are made when something asks for them
 * (JSON, the tracer, the diff); the text writer prints the ranges, so a text compile
 * makes none of the hundreds of thousands of objects they would be at 50k Services.
 */
class RangeSetContents implements SetContents {
  private made?: Element[];

  constructor(
    readonly set: NftSet,
    readonly keyRanges: readonly KeyRange[],
  ) {}

  get elements(): Element[] {
    if (!this.made) {
      const name = this.set.name;
      this.made = this.keyRanges.flatMap(({ base, data }) => data.map((d, i): Element => ({ set: name, key: [{ t: 'int', n: base + i }], data: d })));
    }
    return this.made;
  }
}

/** Two data-map values (or none) alike. */
const keysEqual = (a?: KeyPart[], b?: KeyPart[]) => (a && b ? elementSortKey(a) === elementSortKey(b) : a === b);

/** Every rule's statements (JSON output and tracing): the table, its chains in the order made. */
export class StatementStore implements RuleStore<TableContents> {
  private readonly chainRules: Rule[][] = [];

  chainAdded(): void {
    this.chainRules.push([]);
  }

  keepRule(chain: number, r: NewRule): void {
    const rule: Rule = { chain: r.chain, body: { stmts: r.stmts } };
    if (r.comment !== undefined) rule.comment = r.comment;
    this.chainRules[chain].push(rule);
  }

  finish(t: BuiltTable): TableContents {
    const chains: ChainContents[] = t.chains.map((chain, i) => ({ chain, rules: this.chainRules[i] }));
    return { table: t.table, chains, sets: t.sets };
  }
}

/** A builder of a table with every rule's statements. */
export const statementsBuilder = (table: Table): TableBuilder<TableContents> => new TableBuilder(table, new StatementStore());
