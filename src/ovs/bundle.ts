// The bundle: groups and flows collected, deduplicated and printed in a fixed order, so the
// same snapshot always gives the same bytes. The order is also what OVS needs: a flow that
// names a group must come after the group's line, or the whole bundle is rejected.
import { InternalError } from '../diag/diagnostic.js';
import type { Flow, Group } from './openflow.js';
import { REPLACE_ALL, addFlowText, groupOps, opText } from './ops.js';
import { GroupRefs, PlacedFlows, flowPlace } from './placed.js';
import { matchText } from './syntax.js';

/** Where a compile puts what it makes: a bundle, or a program kept in dump form (dump-program.ts). */
export interface FlowSink<Owner> {
  addGroup(g: Group): void;
  /** A flow at the place and match of another, different one is a conflict; an identical one is kept once. */
  addFlow(flow: Flow, owner: Owner): void;
}

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

/** A flow as kept: its `flow add` line, with its value or (text form) without. */
interface Kept<Owner> {
  flow: Flow | undefined;
  text: string;
  owner: Owner;
}

export class Bundle<Owner> implements FlowSink<Owner> {
  private readonly groups = new Map<number, Group>();
  private readonly groupTexts = new Map<number, string[]>();
  private readonly flows = new PlacedFlows<Kept<Owner>>();
  private readonly groupRefs = new GroupRefs();

  constructor(
    private readonly onConflict: (c: FlowConflict<Owner>) => void,
    private readonly form: BundleForm = 'values',
  ) {}

  addGroup(g: Group): void {
    if (this.groupTexts.has(g.id)) throw new InternalError(`group ${g.id} allocated twice`);
    this.groupTexts.set(g.id, groupOps('add', g).map(opText));
    if (this.form === 'values') this.groups.set(g.id, g);
  }

  /**
   * Adds a flow unless the same match at the same priority is already there: an identical
   * flow (an endpoint shared by Services) is kept once; a different one is a conflict and
   * the first (in the model's sorted order) wins, as OVS would otherwise replace it.
   */
  addFlow(flow: Flow, owner: Owner): void {
    const match = matchText(flow);
    const text = addFlowText(flow, match);
    const had = this.flows.addNew(flowPlace(flow.table, flow.priority), match, { flow: this.form === 'values' ? flow : undefined, text, owner });
    if (had) {
      if (had.text !== text) this.onConflict({ keptOwner: had.owner, dropped: flow, droppedOwner: owner });
      return;
    }
    this.groupRefs.add(flow, text);
  }

  /** Deletes, groups by ID, then flows by table, priority descending, text. */
  text(): string {
    const lines: string[] = [];
    this.eachLine((l) => lines.push(l));
    return lines.join('\n') + '\n';
  }

  /** The lines of text(), one at a time, for a writer that streams them. */
  eachLine(line: (text: string) => void): void {
    this.groupRefs.check((id) => this.groupTexts.has(id));
    for (const op of REPLACE_ALL) line(opText(op));
    for (const id of this.groupIDs()) for (const l of this.groupTexts.get(id)!) line(l);
    for (const same of this.flows.inPlaceOrder()) for (const text of printOrder(same)) line(text);
  }

  /** What the bundle adds, in its order: groups by ID, flows by table, priority descending, text. */
  contents(): { groups: Group[]; flows: BundleFlow<Owner>[] } {
    if (this.form !== 'values') throw new InternalError('the bundle keeps only text');
    this.groupRefs.check((id) => this.groupTexts.has(id));
    const flows: BundleFlow<Owner>[] = [];
    for (const same of this.flows.inPlaceOrder()) {
      // A place's texts are distinct: each is its own flow's match at the place.
      const byText = new Map(same.map((e) => [e.text, e]));
      for (const text of printOrder(same)) {
        const e = byText.get(text)!;
        flows.push({ flow: e.flow!, text, owner: e.owner });
      }
    }
    return { groups: this.groupIDs().map((id) => this.groups.get(id)!), flows };
  }

  private groupIDs(): number[] {
    return [...this.groupTexts.keys()].sort((a, b) => a - b);
  }
}

/**
 * The texts of one place's flows in print order: strings sort by their UTF-16 units without
 * a comparator, several times faster than sorting the flows with one.
 */
function printOrder<Owner>(same: Kept<Owner>[]): string[] {
  return same.map((e) => e.text).sort();
}
