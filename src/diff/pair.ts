// Pairing the wanted chains and sets with the live ones, by name, and giving each pair its
// fate (new, kept, recreated, gone): what the diff's phases (diff.ts) then turn into
// operations. Chains are paired walking both tables in the order made where the live table
// lists them so (a table kproxc loaded), else by name; either way the pairs come out in
// name order, and the same pairs.
import type { LiveSet, LiveTableView } from '../live/view.js';
import type { BaseChainSpec, NftSet } from '../nft/objects.js';
import type { ChainContents, SetContents } from '../nft/ruleset.js';
import { inNameOrder, sortedOrder } from '../nft/sort-names.js';

export const byNameOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Chains (kept in the order made or listed) in the order of their names. */
export function byName(chains: ChainContents[]): ChainContents[] {
  return inNameOrder(chains, (c) => c.chain.name);
}

export function sameSpec(a: BaseChainSpec, b: BaseChainSpec): boolean {
  return a.type === b.type && a.hook === b.hook && a.priority === b.priority;
}

export const policyOf = (b: BaseChainSpec) => b.policy ?? 'accept';

/** nft gives a set that an `update` statement writes, declared without a size, this one. */
const DYNAMIC_DEFAULT_SIZE = 65535;

/**
 * Set definitions as the listing shows them: without "dynamic" (nft 1.0.6 never lists it),
 * and with the size nft gives a set an `update` writes when it has none of its own. The
 * comment is not compared: nft 1.0.6 keeps it when the set is loaded from text and drops
 * it when loaded from JSON, so the same output would list two ways; and nft cannot change
 * it but by recreating the set, which costs its referring chains and every element (or an
 * affinity set's members) for a string that decides nothing.
 */
function sameDefinition(a: NftSet, b: NftSet): boolean {
  const flags = (s: NftSet) => (s.flags ?? []).filter((f) => f !== 'dynamic').sort();
  const size = (s: NftSet) => (s.size === DYNAMIC_DEFAULT_SIZE ? null : (s.size ?? null));
  const same = (x: string[], y: string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    a.kind === b.kind &&
    size(a) === size(b) &&
    same(a.keyType, b.keyType) &&
    same(a.data?.types ?? [], b.data?.types ?? []) &&
    same(flags(a), flags(b))
  );
}


export type ChainFate = 'new' | 'kept' | 'recreate-early' | 'recreate-late' | 'gone';
export type SetFate = 'new' | 'kept' | 'timeout' | 'recreate' | 'gone';

/** A chain by name: wanted (d), live (chain li of the live table), or both. */
export interface ChainPair {
  name: string;
  d?: ChainContents;
  /** Its index in the live table; -1 when it is not live. */
  li: number;
  /** The live chain's hook, type, priority and policy, when it is a base chain. */
  lBase?: BaseChainSpec;
  fate: ChainFate;
  /** Kept, and its live rules print as the wanted ones. */
  same?: boolean;
  /** Flushed (or deleted) earlier in this transaction. */
  emptied?: boolean;
  /** Flushed for a set recreated under it: to be filled again whole. */
  refilled?: boolean;
}

/** A set or map by name: wanted (d), live (l), or both. */
export interface SetPair {
  name: string;
  d?: SetContents;
  l?: LiveSet;
  fate: SetFate;
  /** keyString of each wanted element, made once. */
  keys?: string[];
  /** The live elements have the wanted keys, in the same order. */
  sameKeys?: boolean;
}


// How far on the made and listed orders are looked at for where they agree again.
const REALIGN_CHAINS = 8;
// Chains set apart where the two orders disagree, at most, before all are paired by name.
const MAX_SET_APART = 4096;

/** How many steps on `name` is (1..REALIGN_CHAINS) in a list read by `nameAt`; -1 when not that near. */
function stepsTo(name: string, nameAt: (k: number) => string | undefined): number {
  for (let k = 1; k <= REALIGN_CHAINS; k++) {
    const n = nameAt(k);
    if (n === undefined) return -1;
    if (n === name) return k;
  }
  return -1;
}

/** Indexes 0..count-1 in the order of their names. */
function nameOrder(count: number, name: (i: number) => string): number[] {
  return Array.from(sortedOrder(Array.from({ length: count }, (_, i) => name(i))));
}

/** Whether the names of items 0..count-1 are in strictly increasing order. */
function namesInOrder(count: number, name: (i: number) => string): boolean {
  for (let i = 1; i < count; i++) if (!(name(i - 1) < name(i))) return false;
  return true;
}

/**
 * Wanted and live items paired by name, in name order: one pass over both lists, each
 * sorted first unless it is in name order already. A large table has a hundred thousand
 * chains, and maps of them by name would cost more than the rest of an unchanged diff.
 */
export function pairByName<P>(dCount: number, dName: (i: number) => string, lCount: number, lName: (j: number) => string, pair: (name: string, di: number, lj: number) => P | null): P[] {
  const ds = namesInOrder(dCount, dName) ? undefined : nameOrder(dCount, dName);
  const ls = namesInOrder(lCount, lName) ? undefined : nameOrder(lCount, lName);
  return mergeByName(dCount, dName, lCount, lName, pair, ds, ls);
}

/** The pairs (but those `pair` leaves out) of two lists, each in name order or read in the order given. */
function mergeByName<P>(
  dCount: number,
  dName: (i: number) => string,
  lCount: number,
  lName: (j: number) => string,
  pair: (name: string, di: number, lj: number) => P | null,
  ds?: number[],
  ls?: number[],
): P[] {
  const out: P[] = [];
  const add = (p: P | null) => p !== null && out.push(p);
  let i = 0;
  let j = 0;
  while (i < dCount || j < lCount) {
    const di = ds ? ds[i] : i;
    const lj = ls ? ls[j] : j;
    const dn = i < dCount ? dName(di) : undefined;
    const ln = j < lCount ? lName(lj) : undefined;
    if (dn !== undefined && dn === ln) {
      add(pair(dn, di, lj));
      i++;
      j++;
    } else if (ln === undefined || (dn !== undefined && dn < ln)) {
      add(pair(dn!, di, -1));
      i++;
    } else {
      add(pair(ln, -1, lj));
      j++;
    }
  }
  return out;
}

export function chainFate(d: ChainContents | undefined, live: boolean, lBase: BaseChainSpec | undefined): ChainFate {
  if (!d) return 'gone';
  if (!live) return 'new';
  if (lBase && !(d.chain.base && sameSpec(lBase, d.chain.base))) return 'recreate-early';
  if (!lBase && d.chain.base) return 'recreate-late';
  return 'kept';
}

export function setFate(d: SetContents | undefined, l: LiveSet | undefined): SetFate {
  if (!d) return 'gone';
  if (!l) return 'new';
  if (!sameDefinition(l.set, d.set)) return 'recreate';
  if (l.set.timeoutSeconds !== d.set.timeoutSeconds) return 'timeout';
  return 'kept';
}

/** The pair of a chain, or null when it is kept as it is: a regular chain, wanted and live, whose rules print the same. */
function pairNeeded(live: LiveTableView, name: string, d: ChainContents | undefined, li: number): ChainPair | null {
  const pair = chainPair(live, name, d, li);
  return pair.fate === 'kept' && pair.same && !pair.lBase && !pair.d!.chain.base ? null : pair;
}

/** Wanted chains and live ones (their indexes) paired by name, in name order. */
export function pairChains(live: LiveTableView, ds: ChainContents[], ls: ArrayLike<number>): ChainPair[] {
  return pairByName(
    ds.length,
    (i) => ds[i].chain.name,
    ls.length,
    (j) => live.chainName(ls[j]),
    (name, di, lj) => pairNeeded(live, name, di < 0 ? undefined : ds[di], lj < 0 ? -1 : ls[lj]),
  );
}

/**
 * The chains paired walking both tables in the order made (the order nft lists a table
 * it loaded from kproxc's output), the pairs that need an operation then sorted by name:
 * the same pairs as pairChains gives. Unchanged, the two orders agree chain by chain, and
 * each chain's lines lie next to the one before, where the name order would visit a
 * hundred thousand chains and their lines scattered over the heap. Where they disagree
 * (chains made or gone), the chains of one side up to where they agree again, a few
 * chains on, are set apart and paired by name at the end. Null when that is more than
 * MAX_SET_APART chains: the live table was made in another order (by another program,
 * or by kproxc's flat output of old, which made chains in name order), and pairing all
 * by name costs less than walking on.
 */
export function pairInMadeOrder(live: LiveTableView, made: ChainContents[], listed: ArrayLike<number>): ChainPair[] | null {
  const pairs: ChainPair[] = [];
  const dRest: ChainContents[] = [];
  const lRest: number[] = [];
  const madeName = (i: number) => (i < made.length ? made[i].chain.name : undefined);
  const listedName = (j: number) => (j < listed.length ? live.chainName(listed[j]) : undefined);
  let i = 0;
  let j = 0;
  while (i < made.length && j < listed.length) {
    const d = made[i];
    const name = d.chain.name;
    const lName = live.chainName(listed[j]);
    if (name === lName) {
      const pair = pairNeeded(live, name, d, listed[j]);
      if (pair) pairs.push(pair);
      i++;
      j++;
      continue;
    }
    const inListed = stepsTo(name, (k) => listedName(j + k));
    const inMade = stepsTo(lName, (k) => madeName(i + k));
    if (inListed > 0 && (inMade < 0 || inListed <= inMade)) {
      for (const end = j + inListed; j < end; j++) lRest.push(listed[j]);
    } else if (inMade > 0) {
      for (const end = i + inMade; i < end; i++) dRest.push(made[i]);
    } else {
      dRest.push(made[i++]);
      lRest.push(listed[j++]);
    }
    if (dRest.length + lRest.length > MAX_SET_APART) return null;
  }
  while (i < made.length) dRest.push(made[i++]);
  while (j < listed.length) lRest.push(listed[j++]);
  for (const pair of pairChains(live, dRest, lRest)) pairs.push(pair);
  return pairs.sort((a, b) => byNameOrder(a.name, b.name));
}

export function chainPair(live: LiveTableView, name: string, d: ChainContents | undefined, li: number): ChainPair {
  const lBase = li < 0 ? undefined : live.chainBase(li);
  const fate = chainFate(d, li >= 0, lBase);
  // Compared here, while the wanted chain is at hand: most of a large table is
  // unchanged, and visiting it twice costs as much as comparing it.
  return { name, d, li, lBase, fate, same: fate === 'kept' && live.printsAs(li, d!) };
}

/** Wanted and live sets paired by name, in name order. */
export function pairSets(ds: SetContents[], ls: LiveSet[]): SetPair[] {
  return pairByName(
    ds.length,
    (i) => ds[i].set.name,
    ls.length,
    (j) => ls[j].set.name,
    (name, di, lj): SetPair => {
      const d = di < 0 ? undefined : ds[di];
      const l = lj < 0 ? undefined : ls[lj];
      return { name, d, l, fate: setFate(d, l) };
    },
  );
}
