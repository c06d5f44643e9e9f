// The smallest transaction from the live tables to the desired ones. Pure: tables in,
// operations out. The order of the operations is the one measured to work on nft 1.0.6
// (docs/diff.md; the design facts' section 3):
//   A  new chains and sets (and base chains whose hook, type or priority changed, which
//      must be deleted and recreated; a changed policy or set timeout is set in place)
//   B  sets whose type, flags or comment changed: their referring chains are flushed,
//      then the set is deleted and created again
//   C  elements added (a changed value or comment: deleted, then added)
//   D  rules: new chains filled; a changed chain flushed and refilled, or, when that is
//      shorter, its stale rules deleted by handle and the missing ones appended
//   E  elements removed
//   F  chains no longer wanted: all flushed first, then all deleted (with two phases the
//      deletes are held back for a second transaction, for kernels before 6.2)
//   G  sets no longer wanted, now that no rule refers to them
//   H  regular chains that must become base chains, after their old selves are gone
// Members of sets with timeouts (session affinity) are never compared or touched.
import type { Family } from './expr.js';
import { ruleKey } from './canonical.js';
import type { BaseChainSpec, Chain, Element, NftSet, Rule } from './objects.js';
import { keyString, stmtReferences, type ChainContents, type SetContents, type TableContents } from './ruleset.js';
import { ruleBodyText } from './text.js';
import { createContents, type Op, type TableRef, type Transaction } from './transaction.js';

export interface DiffOptions {
  /** Hold chain deletions back for a second transaction (kernels before 6.2). */
  twoPhase?: boolean;
}

export interface DiffResult {
  /** The transaction to apply now. */
  now: Transaction;
  /** With twoPhase: the chain deletions, to apply in a later transaction. */
  later: Transaction;
}

export function diffTables(desired: TableContents[], live: TableContents[], opts: DiffOptions = {}): DiffResult {
  const result: DiffResult = { now: [], later: [] };
  for (const d of desired) {
    const ref: TableRef = { family: d.table.family, name: d.table.name };
    const l = live.find((t) => t.table.family === ref.family && t.table.name === ref.name);
    if (!l) {
      result.now.push({ verb: 'add', t: 'table', table: d.table });
      for (const op of createContents(d, ref)) result.now.push(op);
      continue;
    }
    const r = new TableDiff(d, l, ref, opts).run();
    for (const op of r.now) result.now.push(op);
    for (const op of r.later) result.later.push(op);
  }
  return result;
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sameSpec(a: BaseChainSpec, b: BaseChainSpec): boolean {
  return a.type === b.type && a.hook === b.hook && a.priority === b.priority;
}

const policyOf = (b: BaseChainSpec) => b.policy ?? 'accept';

/** Set definitions as the listing shows them: without "dynamic" (nft 1.0.6 never lists it). */
function definitionKey(s: NftSet): string {
  const flags = (s.flags ?? []).filter((f) => f !== 'dynamic').sort();
  return JSON.stringify([s.kind, s.keyType, flags, s.comment ?? null]);
}

const hasTimeouts = (s: NftSet) => s.flags?.includes('timeout') === true;

/** What an element holds besides its key: its verdict (maps) and its comment. */
function elementValueKey(e: Element): string {
  return JSON.stringify([e.value ?? null, e.comment ?? null]);
}

/**
 * Rules that print as the same nft text are the same rules: the text is what nft reads.
 * Most chains of a large table are unchanged, and printing is far cheaper than making
 * their canonical keys; rules that print differently (nft's own spellings, a changed
 * rule) are compared by key.
 */
function samePrintedRules(want: Rule[], have: Rule[]): boolean {
  if (want.length !== have.length) return false;
  try {
    for (let i = 0; i < want.length; i++) {
      const w = want[i];
      const h = have[i];
      if (h.foreign || w.comment !== h.comment || ruleBodyText(w.stmts) !== ruleBodyText(h.stmts)) return false;
    }
  } catch {
    return false; // a live string kproxc would not print (hand-made): compared by key instead
  }
  return true;
}

type ChainFate = 'new' | 'kept' | 'recreate-early' | 'recreate-late';
type SetFate = 'new' | 'kept' | 'timeout' | 'recreate';

class TableDiff {
  private readonly dChains: Map<string, ChainContents>;
  private readonly lChains: Map<string, ChainContents>;
  private readonly dSets: Map<string, SetContents>;
  private readonly lSets: Map<string, SetContents>;
  private readonly chainFate = new Map<string, ChainFate>();
  private readonly setFate = new Map<string, SetFate>();
  /** Live chains flushed (or deleted) earlier in this transaction. */
  private readonly emptied = new Set<string>();
  private readonly refilled = new Set<string>();
  private readonly now: Op[] = [];
  private readonly later: Op[] = [];
  private readonly family: Family;

  constructor(
    desired: TableContents,
    live: TableContents,
    private readonly ref: TableRef,
    private readonly opts: DiffOptions,
  ) {
    this.family = ref.family;
    this.dChains = new Map(desired.chains.map((c) => [c.chain.name, c]));
    this.lChains = new Map(live.chains.map((c) => [c.chain.name, c]));
    this.dSets = new Map(desired.sets.map((s) => [s.set.name, s]));
    this.lSets = new Map(live.sets.map((s) => [s.set.name, s]));
  }

  run(): DiffResult {
    this.classify();
    this.phaseA();
    this.phaseB();
    this.phaseC();
    this.phaseD();
    this.phaseE();
    this.phaseF();
    this.phaseG();
    this.phaseH();
    return { now: this.now, later: this.later };
  }

  private classify(): void {
    for (const [name, d] of this.dChains) {
      const l = this.lChains.get(name);
      let fate: ChainFate = 'kept';
      if (!l) fate = 'new';
      else if (l.chain.base && !(d.chain.base && sameSpec(l.chain.base, d.chain.base))) fate = 'recreate-early';
      else if (!l.chain.base && d.chain.base) fate = 'recreate-late';
      this.chainFate.set(name, fate);
    }
    for (const [name, d] of this.dSets) {
      const l = this.lSets.get(name);
      let fate: SetFate = 'kept';
      if (!l) fate = 'new';
      else if (definitionKey(l.set) !== definitionKey(d.set)) fate = 'recreate';
      else if (l.set.timeoutSeconds !== d.set.timeoutSeconds) fate = 'timeout';
      this.setFate.set(name, fate);
    }
  }

  private op(o: Op): void {
    this.now.push(o);
  }

  private chainOp(verb: 'add' | 'delete' | 'flush', chain: Chain): Op {
    return { verb, t: 'chain', table: this.ref, chain };
  }

  private flush(name: string): void {
    if (this.emptied.has(name)) return;
    this.emptied.add(name);
    if ((this.lChains.get(name)?.rules.length ?? 0) > 0) this.op(this.chainOp('flush', { name }));
  }

  private sorted<T>(m: Map<string, T>, pred: (name: string) => boolean): string[] {
    return [...m.keys()].filter(pred).sort(byName);
  }

  /** New chains and sets; base chains recreated; policies and set timeouts set in place. */
  private phaseA(): void {
    for (const name of this.sorted(this.dChains, (n) => this.chainFate.get(n) === 'recreate-early')) {
      this.flush(name);
      this.op(this.chainOp('delete', { name }));
      this.op(this.chainOp('add', this.dChains.get(name)!.chain));
    }
    for (const name of this.sorted(this.dChains, (n) => this.chainFate.get(n) === 'new')) {
      this.op(this.chainOp('add', this.dChains.get(name)!.chain));
    }
    for (const name of this.sorted(this.dChains, (n) => this.chainFate.get(n) === 'kept')) {
      const d = this.dChains.get(name)!.chain;
      const l = this.lChains.get(name)!.chain;
      // `add chain` with the same hook, type and priority changes the policy in place.
      if (d.base && l.base && policyOf(d.base) !== policyOf(l.base)) {
        this.op(this.chainOp('add', { ...d, base: { ...d.base, policy: policyOf(d.base) } }));
      }
    }
    for (const name of this.sorted(this.dSets, (n) => this.setFate.get(n) === 'new' || this.setFate.get(n) === 'timeout')) {
      // For a changed timeout, `add set` updates it in place and keeps the members.
      this.op({ verb: 'add', t: 'set', table: this.ref, set: this.dSets.get(name)!.set });
    }
  }

  /** Which live chains refer to each set, by `@set` or `update @set`. */
  private liveSetReferrers(): Map<string, Set<string>> {
    const refs = new Map<string, Set<string>>();
    for (const [name, c] of this.lChains) {
      for (const r of c.rules) {
        const sets = [...r.stmts.flatMap((s) => stmtReferences(s).sets), ...(r.foreign?.setRefs ?? [])];
        for (const set of sets) {
          if (!refs.has(set)) refs.set(set, new Set());
          refs.get(set)!.add(name);
        }
      }
    }
    return refs;
  }

  /** Sets whose definition changed: referrers flushed, set deleted and created again. */
  private phaseB(): void {
    const recreate = this.sorted(this.dSets, (n) => this.setFate.get(n) === 'recreate');
    if (recreate.length === 0) return;
    const referrers = this.liveSetReferrers();
    for (const name of recreate) {
      for (const chain of [...(referrers.get(name) ?? [])].sort(byName)) {
        this.flush(chain);
        if (this.chainFate.get(chain) === 'kept') this.refilled.add(chain);
      }
    }
    for (const name of recreate) {
      const set = this.dSets.get(name)!.set;
      this.op({ verb: 'delete', t: 'set', table: this.ref, set: this.lSets.get(name)!.set });
      this.op({ verb: 'add', t: 'set', table: this.ref, set });
    }
  }

  private elementOp(verb: 'add' | 'delete', set: NftSet, element: Element): Op {
    return { verb, t: 'element', table: this.ref, set, element };
  }

  /** Elements added; a changed value or comment is deleted and added again. */
  private phaseC(): void {
    for (const name of [...this.dSets.keys()].sort(byName)) {
      const d = this.dSets.get(name)!;
      const fate = this.setFate.get(name)!;
      if (fate === 'new' || fate === 'recreate') {
        for (const e of d.elements) this.op(this.elementOp('add', d.set, e));
        continue;
      }
      if (hasTimeouts(d.set)) continue; // dynamic members: not ours to compare
      const live = new Map(this.lSets.get(name)!.elements.map((e) => [keyString(e.key), e]));
      for (const e of d.elements) {
        const l = live.get(keyString(e.key));
        if (l && elementValueKey(l) === elementValueKey(e)) continue;
        // nft refuses `add element` of an existing key with another value ("File exists")
        // and ignores a new comment: the old element goes first.
        if (l) this.op(this.elementOp('delete', d.set, l));
        this.op(this.elementOp('add', d.set, e));
      }
    }
  }

  private ruleKeys(rules: Rule[]): string[] {
    return rules.map((r) => ruleKey(r, this.family));
  }

  private addRules(rules: Rule[]): void {
    for (const rule of rules) this.op({ verb: 'add', t: 'rule', table: this.ref, rule });
  }

  /** Rules of new and changed chains. */
  private phaseD(): void {
    for (const name of [...this.dChains.keys()].sort(byName)) {
      const d = this.dChains.get(name)!;
      const fate = this.chainFate.get(name)!;
      if (fate === 'recreate-late') continue;
      if (fate !== 'kept' || this.refilled.has(name)) {
        this.addRules(d.rules);
        continue;
      }
      this.rewriteChain(d, this.lChains.get(name)!);
    }
  }

  /**
   * A kept chain whose rules differ: either flush and add every rule, or delete the stale
   * rules by handle and append the missing ones, whichever takes fewer lines. Rules are
   * only appended, never inserted at a position (1.5 s per insert on a 10k-Service table).
   */
  private rewriteChain(d: ChainContents, l: ChainContents): void {
    if (samePrintedRules(d.rules, l.rules)) return;
    const want = this.ruleKeys(d.rules);
    const have = this.ruleKeys(l.rules);
    if (want.length === have.length && want.every((k, i) => k === have[i])) return;
    // The longest prefix of the wanted rules that the live rules hold in order: those stay.
    const stale: Rule[] = [];
    let kept = 0;
    have.forEach((k, i) => {
      if (kept < want.length && k === want[kept]) kept++;
      else stale.push(l.rules[i]);
    });
    const perRule = stale.length + (want.length - kept);
    if (perRule < 1 + want.length) {
      for (const r of stale) this.op({ verb: 'delete', t: 'rule', table: this.ref, rule: r as Rule & { handle: number } });
      this.addRules(d.rules.slice(kept));
    } else {
      this.flush(d.chain.name);
      this.addRules(d.rules);
    }
  }

  /** Elements whose keys are no longer wanted. */
  private phaseE(): void {
    for (const name of [...this.dSets.keys()].sort(byName)) {
      const d = this.dSets.get(name)!;
      if (this.setFate.get(name) !== 'kept' && this.setFate.get(name) !== 'timeout') continue;
      if (hasTimeouts(d.set)) continue;
      const wanted = new Set(d.elements.map((e) => keyString(e.key)));
      for (const e of this.lSets.get(name)!.elements) {
        if (!wanted.has(keyString(e.key))) this.op(this.elementOp('delete', d.set, e));
      }
    }
  }

  private doomedChains(): string[] {
    return this.sorted(this.lChains, (n) => !this.dChains.has(n) || this.chainFate.get(n) === 'recreate-late');
  }

  /** Chains no longer wanted: every one flushed first, then deleted in any order. */
  private phaseF(): void {
    const doomed = this.doomedChains();
    for (const name of doomed) this.flush(name);
    const target = this.opts.twoPhase ? this.later : this.now;
    for (const name of doomed) target.push(this.chainOp('delete', { name }));
  }

  /** Sets no longer wanted; the chains that referred to them are flushed by now. */
  private phaseG(): void {
    for (const name of this.sorted(this.lSets, (n) => !this.dSets.has(n))) {
      this.op({ verb: 'delete', t: 'set', table: this.ref, set: this.lSets.get(name)!.set });
    }
  }

  /** Regular chains turned into base chains, once the old ones are deleted. */
  private phaseH(): void {
    const target = this.opts.twoPhase ? this.later : this.now;
    for (const name of this.sorted(this.dChains, (n) => this.chainFate.get(n) === 'recreate-late')) {
      const d = this.dChains.get(name)!;
      target.push(this.chainOp('add', d.chain));
      for (const rule of d.rules) target.push({ verb: 'add', t: 'rule', table: this.ref, rule });
    }
  }
}
