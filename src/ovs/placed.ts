// What a bundle (bundle.ts) and a program kept in dump form (dump-program.ts) share: flows
// known by their place (table and priority) and match, as OVS knows them, and the check
// that every group a flow names is there.
import { InternalError } from '../diag/diagnostic.js';
import type { Flow } from './openflow.js';

/**
 * A table and priority as one number, in print order: the table ascending, then the
 * priority descending (priorities are 0..65535).
 */
export function flowPlace(table: number, priority: number): number {
  return table * 65536 + (65535 - priority);
}

export const placeTable = (place: number): number => Math.floor(place / 65536);
export const placePriority = (place: number): number => 65535 - (place % 65536);

/** Entries by place, then by match, each kept in the order added. */
export class PlacedFlows<T> {
  private readonly byPlace = new Map<number, Map<string, T>>();

  /** Adds `entry` unless the place and match hold one already; returns that one, or undefined. */
  addNew(place: number, match: string, entry: T): T | undefined {
    let same = this.byPlace.get(place);
    if (!same) this.byPlace.set(place, (same = new Map()));
    const had = same.get(match);
    if (had === undefined) same.set(match, entry);
    return had;
  }

  get(place: number, match: string): T | undefined {
    return this.byPlace.get(place)?.get(match);
  }

  /** Every entry in the order added (places by their first entry); deterministic, as the model's order is. */
  each(fn: (e: T, match: string, place: number) => void): void {
    for (const [place, same] of this.byPlace) for (const [match, e] of same) fn(e, match, place);
  }

  /**
   * The entries a place at a time, places in print order: a few dozen small sorts of a
   * place's texts cost much less than one sort of every flow that compares numbers first.
   */
  inPlaceOrder(): T[][] {
    return [...this.byPlace.keys()].sort((a, b) => a - b).map((place) => [...this.byPlace.get(place)!.values()]);
  }
}

/** The groups flows name, each with the flow's text, checked once every group is added. */
export class GroupRefs {
  private readonly refs: (string | number)[] = [];

  add(f: Flow, text: string): void {
    for (const a of f.actions) if (a.t === 'group') this.refs.push(text, a.id);
  }

  /** OVS rejects a whole bundle whose flow names a group it lacks: a bug of ours, caught here. */
  check(has: (id: number) => boolean): void {
    const refs = this.refs;
    for (let i = 0; i < refs.length; i += 2) {
      if (!has(refs[i + 1] as number)) throw new InternalError(`flow names group ${refs[i + 1]} that does not exist: ${refs[i]}`);
    }
  }
}
