// A compiled program kept in the form `ovs-ofctl` dumps it (dump-form.ts): each flow known
// by its place and match as printed there, with its cookie and actions as printed, and its
// value for printing it in bundle syntax. What the ovs diff compares with a bridge's dumps,
// and what the conntrack clean-up reads, from one compile.
//
// At 10,000 Services a program is some 140,000 flows, and their values (trees of small
// objects) cost more than 100 MB at the peak. A diff prints only the flows a bridge lacks
// or holds otherwise, so given the flows a bridge holds, the program keeps no value of a
// flow held exactly as printed here. A flow that learns keeps its value whatever the bridge
// holds: what it learns for is read from it, to judge the flows it learned.
import { InternalError } from '../diag/diagnostic.js';
import type { FlowConflict, FlowSink } from './bundle.js';
import { canonicalActions, canonicalGroupLine, canonicalMatch, cookieHex } from './dump-form.js';
import type { Flow, Group } from './openflow.js';
import { GroupRefs, PlacedFlows, flowPlace, placePriority, placeTable } from './placed.js';

/** A flow as a dump prints it: its cookie and actions (its place and match are its key). */
export interface DumpedText {
  cookie: string;
  actions: string;
}

/** Flows as a dump prints them, by place (flowPlace) and match; a LiveFlow of src/live/ovs/ is one. */
export type DumpIndex = ReadonlyMap<number, ReadonlyMap<string, DumpedText>>;

export interface DumpedFlow<Owner> extends DumpedText {
  owner: Owner;
  /** Its value; none when the bridge the program was given holds it as printed here. */
  flow: Flow | undefined;
}

/** Where a flow is and what it matches, as the dump prints them. */
export interface FlowPlace {
  table: number;
  priority: number;
  match: string;
}

const learns = (f: Flow) => f.actions.some((a) => a.t === 'learn');

export class DumpProgram<Owner> implements FlowSink<Owner> {
  private readonly flows = new PlacedFlows<DumpedFlow<Owner>>();
  private readonly groups = new Map<number, Group>();
  private readonly groupRefs = new GroupRefs();

  /** `held`: the flows of the bridge the program is compared with, if any. */
  constructor(
    private readonly onConflict: (c: FlowConflict<Owner>) => void,
    private readonly held?: DumpIndex,
  ) {}

  addGroup(g: Group): void {
    if (this.groups.has(g.id)) throw new InternalError(`group ${g.id} allocated twice`);
    this.groups.set(g.id, g);
  }

  addFlow(flow: Flow, owner: Owner): void {
    const place = flowPlace(flow.table, flow.priority);
    const match = canonicalMatch(flow);
    const cookie = cookieHex(flow.cookie);
    const actions = canonicalActions(flow.actions);
    const h = this.held?.get(place)?.get(match);
    const asHeld = h !== undefined && h.cookie === cookie && h.actions === actions && !learns(flow);
    const had = this.flows.addNew(place, match, { cookie, actions, owner, flow: asHeld ? undefined : flow });
    if (had) {
      if (had.cookie !== cookie || had.actions !== actions) this.onConflict({ keptOwner: had.owner, dropped: flow, droppedOwner: owner });
      return;
    }
    this.groupRefs.add(flow, actions);
  }

  /** The groups, by ID. */
  groupValues(): Group[] {
    this.groupRefs.check((id) => this.groups.has(id));
    return [...this.groups.keys()].sort((a, b) => a - b).map((id) => this.groups.get(id)!);
  }

  /** Every flow, in the order added (the model's order: deterministic). */
  eachFlow(fn: (f: DumpedFlow<Owner>, at: FlowPlace) => void): void {
    this.flows.each((f, match, place) => fn(f, { table: placeTable(place), priority: placePriority(place), match }));
  }

  /** The flows as the dump prints them: table, match and actions. */
  dumpedFlows(): { table: number; match: string; actions: string }[] {
    const out: { table: number; match: string; actions: string }[] = [];
    this.eachFlow((f, at) => out.push({ table: at.table, match: at.match, actions: f.actions }));
    return out;
  }

  /** The groups as the dump prints them: ID and line. */
  dumpedGroups(): { id: number; text: string }[] {
    return this.groupValues().map((g) => ({ id: g.id, text: canonicalGroupLine(g) }));
  }
}
