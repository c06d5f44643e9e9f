// The bundle: groups and flows collected, deduplicated and printed in a fixed order, so the
// same snapshot always gives the same bytes. The order is also what OVS needs: a flow that
// names a group must come after the group's line, or the whole bundle is rejected.
import { InternalError } from '../diag/diagnostic.js';
import type { Flow, Group } from './openflow.js';
import { REPLACE_ALL, addFlowText, groupOps, opText } from './ops.js';
import { matchText } from './syntax.js';

/** Who asked for a flow: a Service port, or nobody for the fixed flows. */
export interface FlowConflict<Owner> {
  keptOwner: Owner;
  dropped: Flow;
  droppedOwner: Owner;
}

/** A flow of the bundle, its printed line, and who asked for it. */
export interface BundleFlow<Owner> {
  flow: Flow;
  text: string;
  owner: Owner;
}

/**
 * What a bundle keeps: its groups and flows as values (for the tracer), or only their
 * lines (for printing: a string per flow instead of a tree of objects, which at 10,000
 * Services is some 130,000 flows the garbage collector would otherwise copy and copy again).
 */
export type BundleForm = 'values' | 'text';

/**
 * How flows are printed and known: by default the bundle's own syntax; the ovs diff keeps
 * them as `ovs-ofctl dump-flows` prints them instead (its match and actions), to compare
 * with a live dump.
 */
export interface FlowPrinter {
  match(f: Flow): string;
  text(f: Flow, match: string): string;
  /** Values form: whether to keep this flow's value (default: every flow's). */
  keep?(f: Flow, match: string, text: string): boolean;
  /** Whether group lines are printed (default); the diff prints only those of changed groups. */
  groupLines?: boolean;
}

const BUNDLE_PRINTER: FlowPrinter = { match: matchText, text: addFlowText };

/** A flow as kept: with its value, or (text form) without. */
export interface Kept<Owner> {
  flow: Flow | undefined;
  text: string;
  owner: Owner;
}

export class Bundle<Owner> {
  private readonly groups = new Map<number, Group>();
  private readonly groupTexts = new Map<number, string[]>();
  /** Flows by place, then by match: a flow is known by its table, priority and match. */
  private readonly flows = new Map<number, Map<string, Kept<Owner>>>();
  /** Groups named by flows (flow text, then group ID), checked once everything is added. */
  private readonly groupRefs: (string | number)[] = [];

  constructor(
    private readonly onConflict: (c: FlowConflict<Owner>) => void,
    private readonly form: BundleForm = 'values',
    private readonly printer: FlowPrinter = BUNDLE_PRINTER,
  ) {}

  addGroup(g: Group): void {
    if (this.groupTexts.has(g.id)) throw new InternalError(`group ${g.id} allocated twice`);
    this.groupTexts.set(g.id, this.printer.groupLines === false ? [] : groupOps('add', g).map(opText));
    if (this.form === 'values') this.groups.set(g.id, g);
  }

  /**
   * Adds a flow unless the same match at the same priority is already there: an identical
   * flow (an endpoint shared by Services) is kept once; a different one is a conflict and
   * the first (in the model's sorted order) wins, as OVS would otherwise replace it.
   */
  addFlow(flow: Flow, owner: Owner): void {
    const match = this.printer.match(flow);
    const text = this.printer.text(flow, match);
    const place = flow.table * 65536 + (65535 - flow.priority);
    let same = this.flows.get(place);
    if (!same) this.flows.set(place, (same = new Map()));
    const had = same.get(match);
    if (had) {
      if (had.text !== text) this.onConflict({ keptOwner: had.owner, dropped: flow, droppedOwner: owner });
      return;
    }
    const keep = this.form === 'values' && (this.printer.keep === undefined || this.printer.keep(flow, match, text));
    same.set(match, { flow: keep ? flow : undefined, text, owner });
    for (const a of flow.actions) if (a.t === 'group') this.groupRefs.push(text, a.id);
  }

  /** Deletes, groups by ID, then flows by table, priority descending, text. */
  text(): string {
    const lines: string[] = [];
    this.eachLine((l) => lines.push(l));
    return lines.join('\n') + '\n';
  }

  /** The lines of text(), one at a time, for a writer that streams them. */
  eachLine(line: (text: string) => void): void {
    this.checkGroupRefs();
    for (const op of REPLACE_ALL) line(opText(op));
    for (const id of this.groupIDs()) for (const l of this.groupTexts.get(id)!) line(l);
    for (const same of this.byPlace()) for (const text of printOrder(same)) line(text);
  }

  /** What the bundle adds, in its order: groups by ID, flows by table, priority descending, text. */
  contents(): { groups: Group[]; flows: BundleFlow<Owner>[] } {
    if (this.form !== 'values') throw new InternalError('the bundle keeps only text');
    this.checkGroupRefs();
    const flows: BundleFlow<Owner>[] = [];
    for (const same of this.byPlace()) {
      // A place's texts are distinct: each is its own flow's match at the place.
      const byText = new Map(same.map((e) => [e.text, e]));
      for (const text of printOrder(same)) {
        const e = byText.get(text)!;
        flows.push({ flow: e.flow!, text, owner: e.owner });
      }
    }
    return { groups: this.groupIDs().map((id) => this.groups.get(id)!), flows };
  }

  /** The flow kept at a table, priority and match (as the printer prints it). */
  find(table: number, priority: number, match: string): Kept<Owner> | undefined {
    return this.flows.get(table * 65536 + (65535 - priority))?.get(match);
  }

  /** Every kept flow, in the order added (the model's order: deterministic), with its printed match. */
  eachKept(fn: (k: Kept<Owner>, match: string) => void): void {
    for (const same of this.flows.values()) for (const [match, k] of same) fn(k, match);
  }

  /** The groups as values, by ID. */
  groupValues(): Group[] {
    if (this.form !== 'values') throw new InternalError('the bundle keeps only text');
    this.checkGroupRefs();
    return this.groupIDs().map((id) => this.groups.get(id)!);
  }

  private checkGroupRefs(): void {
    const refs = this.groupRefs;
    for (let i = 0; i < refs.length; i += 2) {
      if (!this.groupTexts.has(refs[i + 1] as number)) throw new InternalError(`flow names group ${refs[i + 1]} that does not exist: ${refs[i]}`);
    }
  }

  private groupIDs(): number[] {
    return [...this.groupTexts.keys()].sort((a, b) => a - b);
  }

  /**
   * The flows a table and priority at a time, in print order: a few dozen small sorts by
   * text cost much less than one sort of every flow that compares numbers before text.
   * A place is the table ascending, then the priority descending (priorities are 0..65535).
   */
  private byPlace(): Kept<Owner>[][] {
    return [...this.flows.keys()].sort((a, b) => a - b).map((place) => [...this.flows.get(place)!.values()]);
  }
}

/**
 * The texts of one place's flows in print order: strings sort by their UTF-16 units without
 * a comparator, several times faster than sorting the flows with one.
 */
function printOrder<Owner>(same: Kept<Owner>[]): string[] {
  return same.map((e) => e.text).sort();
}
