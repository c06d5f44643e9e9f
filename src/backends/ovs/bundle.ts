// The bundle: groups and flows collected, deduplicated and printed in a fixed order, so the
// same snapshot always gives the same bytes. The order is also what OVS needs: a flow that
// names a group must come after the group's line, or the whole bundle is rejected.
import { InternalError } from '../../diag/diagnostic.js';
import { flowText, groupLines, matchText, type Flow, type Group } from './openflow.js';

/** The bundle owns the bridge: a load replaces everything, learned flows included. */
export const BUNDLE_PREAMBLE = ['flow delete', 'group delete group_id=all'];

/** Who asked for a flow: a Service port, or nobody for the fixed flows. */
export interface FlowConflict<Owner> {
  kept: Flow;
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

export class Bundle<Owner> {
  private readonly groups = new Map<number, Group>();
  private readonly flows = new Map<string, BundleFlow<Owner>>();

  constructor(private readonly onConflict: (c: FlowConflict<Owner>) => void) {}

  addGroup(g: Group): void {
    if (this.groups.has(g.id)) throw new InternalError(`group ${g.id} allocated twice`);
    this.groups.set(g.id, g);
  }

  /**
   * Adds a flow unless the same match at the same priority is already there: an identical
   * flow (an endpoint shared by Services) is kept once; a different one is a conflict and
   * the first (in the model's sorted order) wins, as OVS would otherwise replace it.
   */
  addFlow(flow: Flow, owner: Owner): void {
    const key = `${flow.table}/${flow.priority}/${matchText(flow)}`;
    const text = flowText(flow);
    const had = this.flows.get(key);
    if (!had) this.flows.set(key, { flow, text, owner });
    else if (had.text !== text) this.onConflict({ kept: had.flow, keptOwner: had.owner, dropped: flow, droppedOwner: owner });
  }

  /** Deletes, groups by ID, then flows by table, priority descending, text. */
  text(): string {
    const c = this.contents();
    return [...BUNDLE_PREAMBLE, ...c.groups.flatMap(groupLines), ...c.flows.map((e) => e.text)].join('\n') + '\n';
  }

  /** What the bundle adds, in its order: groups by ID, flows by table, priority descending, text. */
  contents(): { groups: Group[]; flows: BundleFlow<Owner>[] } {
    for (const e of this.flows.values()) {
      for (const a of e.flow.actions) {
        if (a.t === 'group' && !this.groups.has(a.id)) throw new InternalError(`flow names group ${a.id} that does not exist: ${e.text}`);
      }
    }
    const groups = [...this.groups.values()].sort((a, b) => a.id - b.id);
    const flows = [...this.flows.values()].sort(
      (a, b) => a.flow.table - b.flow.table || b.flow.priority - a.flow.priority || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0),
    );
    return { groups, flows };
  }
}
