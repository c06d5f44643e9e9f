// The smallest transaction from the live tables to the desired ones. Pure: tables in,
// operations out. The chains and sets are paired first (pair.ts); then the phases below
// make the operations, in the order measured to work on nft 1.0.6 (docs/diff.md):
//   addNewObjects        new chains and sets (and base chains whose hook, type or priority
//                        changed, which must be deleted and recreated; a changed policy or
//                        set timeout is set in place)
//   recreateChangedSets  sets whose type, flags or size changed: their referring chains
//                        are flushed, then the set is deleted and created again
//   addElements          elements added (a changed value or comment: deleted, then added)
//   writeRules           rules: new chains filled; a changed chain flushed and refilled, or,
//                        when that is shorter, its stale rules deleted by handle and the
//                        missing ones appended
//   removeElements       elements removed
//   emptyDoomedChains    chains no longer wanted, flushed
//   removeSets           sets no longer wanted, now that no rule refers to them
//   removeChains         chains no longer wanted, deleted, now that no rule and no element
//                        of a map refers to them (with two phases the deletes are held back
//                        for a second transaction, for kernels before 6.2)
//   makeBaseChains       regular chains that must become base chains, after their old
//                        selves are gone
//   removeStaleMembers   members of a set the wanted table manages (fast-load's table-wide
//                        affinity set) whose endpoint is gone (stale-members.ts), each
//                        added and then deleted
// Other members of sets with timeouts (session affinity) are never compared or touched.
import type { Family } from '../nft/expr.js';
import { ruleKey, ruleStatements } from '../nft/canonical.js';
import { contentsView, elementValueKey, type LiveTableView } from '../live/view.js';
import type { Chain, Element, NftSet, Rule } from '../nft/objects.js';
import { keyString, type TableContents } from '../nft/ruleset.js';
import { stmtReferences } from '../nft/references.js';
import { createContents, type Op, type TableRef, type Transaction } from '../nft/transaction.js';
import { staleMembers } from './stale-members.js';
import { byName, byNameOrder, chainPair, pairChains, pairInMadeOrder, pairSets, policyOf, type ChainPair, type SetPair } from './pair.js';

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

/** The diff against live tables read into objects (checked/reader.ts readLive). */
export function diffTables(desired: TableContents[], live: TableContents[], opts: DiffOptions = {}): DiffResult {
  return diffLive(desired, live.map(contentsView), opts);
}

/** The diff against live tables as the diff sees them (live/view.ts). */
export function diffLive(desired: TableContents[], live: LiveTableView[], opts: DiffOptions = {}): DiffResult {
  const result: DiffResult = { now: [], later: [] };
  for (const d of desired) {
    const ref: TableRef = { family: d.table.family, name: d.table.name };
    const l = live.find((t) => t.table.family === ref.family && t.table.name === ref.name);
    if (!l) {
      result.now.push({ verb: 'add', t: 'table', table: d.table });
      // A new table's operations name its chains in name order, as the flat form always has.
      for (const op of createContents({ ...d, chains: byName(d.chains) }, ref)) result.now.push(op);
      continue;
    }
    const r = new TableDiff(d, l, ref, opts).run();
    for (const op of r.now) result.now.push(op);
    for (const op of r.later) result.later.push(op);
  }
  return result;
}

const hasTimeouts = (s: NftSet) => s.flags?.includes('timeout') === true;

function sameList(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

class TableDiff {
  /**
   * The chains that may need an operation, in name order: all but those kept as they are
   * (a regular chain, wanted and live, whose rules print the same), which are most of a
   * large table. chainPair() makes the pair of such a chain when it is needed after all.
   */
  private chains: ChainPair[] = [];
  private readonly sets: SetPair[];
  private readonly now: Op[] = [];
  private readonly later: Op[] = [];
  private readonly family: Family;

  constructor(
    private readonly desired: TableContents,
    private readonly live: LiveTableView,
    private readonly ref: TableRef,
    private readonly opts: DiffOptions,
  ) {
    this.family = ref.family;
    const listed = live.listedOrder?.();
    const inMadeOrder = listed ? pairInMadeOrder(live, desired.chains, listed) : null;
    this.chains = inMadeOrder ?? pairChains(live, desired.chains, Array.from({ length: live.chainCount }, (_, j) => j));
    this.sets = pairSets(desired.sets, live.sets);
  }

  run(): DiffResult {
    this.addNewObjects();
    this.recreateChangedSets();
    this.addElements();
    this.writeRules();
    this.removeElements();
    this.emptyDoomedChains();
    this.removeSets();
    this.removeChains();
    this.makeBaseChains();
    this.removeStaleMembers();
    return { now: this.now, later: this.later };
  }

  private op(o: Op): void {
    this.now.push(o);
  }

  private chainOp(verb: 'add' | 'delete' | 'flush', chain: Chain): Op {
    return { verb, t: 'chain', table: this.ref, chain };
  }

  private flush(c: ChainPair): void {
    if (c.emptied) return;
    c.emptied = true;
    if (c.li >= 0 && this.live.ruleCount(c.li) > 0) this.op(this.chainOp('flush', { name: c.name }));
  }

  /** New chains and sets; base chains recreated; policies and set timeouts set in place. */
  private addNewObjects(): void {
    for (const c of this.chains) {
      if (c.fate !== 'recreate-early') continue;
      this.flush(c);
      this.op(this.chainOp('delete', { name: c.name }));
      this.op(this.chainOp('add', c.d!.chain));
    }
    for (const c of this.chains) if (c.fate === 'new') this.op(this.chainOp('add', c.d!.chain));
    for (const c of this.chains) {
      if (c.fate !== 'kept') continue;
      const d = c.d!.chain;
      const l = c.lBase;
      // `add chain` with the same hook, type and priority changes the policy in place.
      if (d.base && l && policyOf(d.base) !== policyOf(l)) {
        this.op(this.chainOp('add', { ...d, base: { ...d.base, policy: policyOf(d.base) } }));
      }
    }
    for (const s of this.sets) {
      // For a changed timeout, `add set` updates it in place and keeps the members.
      if (s.fate === 'new' || s.fate === 'timeout') this.op({ verb: 'add', t: 'set', table: this.ref, set: s.d!.set });
    }
  }

  /** Which live chains refer to each set, by `@set` or `update @set`. */
  private liveSetReferrers(): Map<string, Set<string>> {
    const refs = new Map<string, Set<string>>();
    for (let li = 0; li < this.live.chainCount; li++) {
      for (const r of this.live.rules(li)) {
        const sets = 'foreign' in r.body ? r.body.foreign.setRefs : ruleStatements(r).flatMap((s) => stmtReferences(s).sets);
        for (const set of sets) {
          if (!refs.has(set)) refs.set(set, new Set());
          refs.get(set)!.add(this.live.chainName(li));
        }
      }
    }
    return refs;
  }

  /** Sets whose definition changed: referrers flushed, set deleted and created again. */
  private recreateChangedSets(): void {
    const recreate = this.sets.filter((s) => s.fate === 'recreate');
    if (recreate.length === 0) return;
    const referrers = this.liveSetReferrers();
    // The pairs of every chain now: a referrer may be a chain left out as unchanged.
    const byName = new Map(this.chains.map((c) => [c.name, c]));
    const wanted = new Map(this.desired.chains.map((c) => [c.chain.name, c]));
    const liveIndex = new Map(Array.from({ length: this.live.chainCount }, (_, li) => [this.live.chainName(li), li]));
    const pairOf = (name: string): ChainPair => {
      let c = byName.get(name);
      if (!c) byName.set(name, (c = chainPair(this.live, name, wanted.get(name), liveIndex.get(name)!)));
      return c;
    };
    for (const s of recreate) {
      for (const name of [...(referrers.get(s.name) ?? [])].sort(byNameOrder)) {
        const c = pairOf(name);
        this.flush(c);
        if (c.fate === 'kept') c.refilled = true;
      }
    }
    this.chains = [...byName.values()].sort((a, b) => byNameOrder(a.name, b.name));
    for (const s of recreate) {
      this.op({ verb: 'delete', t: 'set', table: this.ref, set: s.l!.set });
      this.op({ verb: 'add', t: 'set', table: this.ref, set: s.d!.set });
    }
  }

  private elementOp(verb: 'add' | 'delete', set: NftSet, element: Element): Op {
    return { verb, t: 'element', table: this.ref, set, element };
  }

  /** keyString of each wanted element. */
  private wantedKeys(s: SetPair): string[] {
    return (s.keys ??= s.d!.elements.map((e) => keyString(e.key)));
  }

  /** Elements added; a changed value or comment is deleted and added again. */
  private addElements(): void {
    for (const s of this.sets) {
      if (!s.d) continue;
      const d = s.d;
      if (s.fate === 'new' || s.fate === 'recreate') {
        for (const e of d.elements) this.op(this.elementOp('add', d.set, e));
        continue;
      }
      if (hasTimeouts(d.set)) continue; // dynamic members: not ours to compare
      const l = s.l!;
      const keys = this.wantedKeys(s);
      // nft refuses `add element` of an existing key with another value ("File exists")
      // and ignores a new comment: the old elements go first. All of a set's deletes, then
      // all its adds, so that each prints as one command (transactionText).
      const deletes: Element[] = [];
      const adds: Element[] = [];
      if (sameList(keys, l.keys)) {
        // The same keys in the same order (both sorted alike): the values are compared in place.
        s.sameKeys = true;
        d.elements.forEach((e, i) => {
          if (l.valueKey(i) === elementValueKey(e)) return;
          deletes.push(l.element(i));
          adds.push(e);
        });
      } else {
        const live = new Map<string, number>();
        l.keys.forEach((k, i) => live.set(k, i));
        d.elements.forEach((e, i) => {
          const at = live.get(keys[i]);
          if (at !== undefined && l.valueKey(at) === elementValueKey(e)) return;
          if (at !== undefined) deletes.push(l.element(at));
          adds.push(e);
        });
      }
      for (const e of deletes) this.op(this.elementOp('delete', d.set, e));
      for (const e of adds) this.op(this.elementOp('add', d.set, e));
    }
  }

  private ruleKeys(rules: Rule[]): string[] {
    return rules.map((r) => ruleKey(r, this.family));
  }

  private addRules(rules: Rule[]): void {
    for (const rule of rules) this.op({ verb: 'add', t: 'rule', table: this.ref, rule });
  }

  /** Rules of new and changed chains. */
  private writeRules(): void {
    for (const c of this.chains) {
      if (!c.d || c.fate === 'recreate-late') continue;
      if (c.fate !== 'kept' || c.refilled) this.addRules(c.d.rules);
      else this.rewriteChain(c);
    }
  }

  /**
   * A kept chain whose rules differ: either flush and add every rule, or delete the stale
   * rules by handle and append the missing ones, whichever takes fewer lines. Rules are
   * only appended, never inserted at a position (1.5 s per insert on a 10k-Service table).
   */
  private rewriteChain(c: ChainPair): void {
    if (c.same) return;
    const d = c.d!;
    const live = this.live.rules(c.li);
    const want = this.ruleKeys(d.rules);
    const have = this.ruleKeys(live);
    if (want.length === have.length && want.every((k, i) => k === have[i])) return;
    // The longest prefix of the wanted rules that the live rules hold in order: those stay.
    const stale: Rule[] = [];
    let kept = 0;
    have.forEach((k, i) => {
      if (kept < want.length && k === want[kept]) kept++;
      else stale.push(live[i]);
    });
    const perRule = stale.length + (want.length - kept);
    if (perRule < 1 + want.length) {
      for (const r of stale) this.op({ verb: 'delete', t: 'rule', table: this.ref, rule: r as Rule & { handle: number } });
      this.addRules(d.rules.slice(kept));
    } else {
      this.flush(c);
      this.addRules(d.rules);
    }
  }

  /** Elements whose keys are no longer wanted. */
  private removeElements(): void {
    for (const s of this.sets) {
      if (s.fate !== 'kept' && s.fate !== 'timeout') continue;
      const d = s.d!;
      if (hasTimeouts(d.set) || s.sameKeys) continue;
      const wanted = new Set(this.wantedKeys(s));
      const l = s.l!;
      l.keys.forEach((k, i) => {
        if (!wanted.has(k)) this.op(this.elementOp('delete', d.set, l.element(i)));
      });
    }
  }

  /** The live chains no longer wanted (or to be made base chains), which are deleted. */
  private doomedChains(): ChainPair[] {
    return this.chains.filter((c) => c.li >= 0 && (c.fate === 'gone' || c.fate === 'recreate-late'));
  }

  /** Chains no longer wanted, flushed: their rules refer to sets and chains no more. */
  private emptyDoomedChains(): void {
    for (const c of this.doomedChains()) this.flush(c);
  }

  /**
   * Chains no longer wanted, deleted in any order, after the sets: a verdict map's elements
   * refer to chains (fast-load's draw maps `goto` endpoint chains), and nft refuses to
   * delete a chain that an element still names ("Device or resource busy").
   */
  private removeChains(): void {
    const target = this.opts.twoPhase ? this.later : this.now;
    for (const c of this.doomedChains()) target.push(this.chainOp('delete', { name: c.name }));
  }

  /** Sets no longer wanted; the chains whose rules referred to them are flushed by now. */
  private removeSets(): void {
    for (const s of this.sets) if (s.fate === 'gone') this.op({ verb: 'delete', t: 'set', table: this.ref, set: s.l!.set });
  }

  /**
   * Members of a live set the wanted table manages that belong to no wanted endpoint,
   * last: the rules that wrote them are changed by now (in one transaction, so no packet
   * sees the old rules after the delete). Each is added before it is deleted, in
   * the same transaction: one that expired since the listing would otherwise fail the
   * delete, and with it the whole transaction (nft 1.0.6 has no `destroy`).
   */
  private removeStaleMembers(): void {
    for (const s of this.sets) {
      if (s.fate !== 'kept' && s.fate !== 'timeout') continue;
      const managed = s.d!.managed;
      const l = s.l!;
      if (!managed || l.keys.length === 0) continue;
      // Each added (in case it expired since the listing), then all deleted: two commands.
      const stale = staleMembers(l, managed);
      for (const e of stale) this.op(this.elementOp('add', s.d!.set, e));
      for (const e of stale) this.op(this.elementOp('delete', s.d!.set, e));
    }
  }

  /** Regular chains turned into base chains, once the old ones are deleted. */
  private makeBaseChains(): void {
    const target = this.opts.twoPhase ? this.later : this.now;
    for (const c of this.chains) {
      if (c.fate !== 'recreate-late') continue;
      target.push(this.chainOp('add', c.d!.chain));
      for (const rule of c.d!.rules) target.push({ verb: 'add', t: 'rule', table: this.ref, rule });
    }
  }
}
