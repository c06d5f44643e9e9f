// The ovs-ofctl bundle that turns a live bridge (as dump-flows and dump-groups print it)
// into what `compile --backend ovs` would load, touching only what differs: the compiled
// program and the bridge in, bundle operations out. Flows are paired by table, priority
// and match as OVS prints them; groups by ID (stable: derived from the Service port).
// Learned affinity flows stay while they still lead where the compiled state goes; flows
// and groups that are not ours are left alone and reported.
import { InternalError, type Diagnostic } from '../../diag/diagnostic.js';
import type { LiveFlow, LiveGroup } from '../../live/ovs/dump-read.js';
import { canonicalGroupLine } from '../../ovs/dump-form.js';
import type { DumpProgram, DumpedFlow, FlowPlace } from '../../ovs/dump-program.js';
import type { Flow, Group } from '../../ovs/openflow.js';
import { MAX_BUCKETS_PER_MESSAGE, groupOps, type BundleOp } from '../../ovs/ops.js';
import { flowPlace } from '../../ovs/placed.js';
import { addLearn, groupEndpoints, keepLearned, type LearnSpec } from './learned.js';
import { note, type LiveBridge } from './live-bridge.js';

export interface OvsDiff {
  /** In order: group adds and changes, flow deletes, changes and adds, group deletes. */
  ops: BundleOp[];
  /** Flows and groups left alone because they are not ours, one note each. */
  notes: Diagnostic[];
}

/** The program keeps the value of every flow the bridge lacks or holds otherwise (dump-program.ts). */
function value(f: DumpedFlow<unknown>, at: FlowPlace): Flow {
  if (!f.flow) throw new InternalError(`table ${at.table} flow priority=${at.priority},${at.match} differs from the bridge but was kept without its value`);
  return f.flow;
}

interface FlowPairs {
  modifies: BundleOp[];
  adds: BundleOp[];
  /** Live flows that a compiled flow pairs with. */
  matched: Set<LiveFlow>;
  /** What the learn flows of each learn cookie learn for. */
  learns: Map<string, LearnSpec[]>;
}

/** Each compiled flow against the live one at its place and match, in the compile's order. */
function pairFlows<Owner>(compiled: DumpProgram<Owner>, bridge: LiveBridge): FlowPairs {
  const pairs: FlowPairs = { modifies: [], adds: [], matched: new Set(), learns: new Map() };
  compiled.eachFlow((f, at) => {
    if (f.flow) addLearn(pairs.learns, f.flow);
    const l = bridge.ours.get(flowPlace(at.table, at.priority))?.get(at.match);
    if (l) pairs.matched.add(l);
    if (l && l.cookie === f.cookie) {
      // Same cookie, other actions: modify keeps the counters and what a learn flow learned.
      if (l.actions !== f.actions) pairs.modifies.push({ verb: 'modify_strict', target: 'flow', flow: value(f, at) });
    } else {
      // An add replaces a flow of another cookie, cookie and all.
      pairs.adds.push({ verb: 'add', target: 'flow', flow: value(f, at) });
    }
  });
  return pairs;
}

const byPlaceAndKey = (a: LiveFlow, b: LiveFlow) => a.table - b.table || b.priority - a.priority || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Our live flows no compiled flow pairs with, and learned flows that lead where the compiled state no longer goes. */
function staleFlows(bridge: LiveBridge, pairs: FlowPairs, wantedGroups: Group[], notes: Diagnostic[]): BundleOp[] {
  const stale: LiveFlow[] = [];
  for (const same of bridge.ours.values()) for (const f of same.values()) if (!pairs.matched.has(f)) stale.push(f);
  const learned = { endpoints: groupEndpoints(wantedGroups), learns: pairs.learns };
  for (const f of bridge.learned) {
    const keep = keepLearned(f, learned);
    if (keep === undefined) notes.push(note(bridge.files.flows, f.line, `table ${f.table} flow ${f.key} is not one kproxc's learn actions make; left alone`));
    else if (!keep) stale.push(f);
  }
  return stale.sort(byPlaceAndKey).map((f) => ({ verb: 'delete_strict', target: 'flow', table: f.table, priority: f.priority, match: f.match }));
}

/** What makes the live group hold the compiled one; nothing when it already does. */
function groupChange(g: Group, live: LiveGroup | undefined): BundleOp[] {
  if (!live) return groupOps('add', g);
  // A group over one message's buckets: the dump may have cut it (its reply length wraps
  // at 64 KiB), so only a whole, equal print is trusted; add_or_mod then rewrites it.
  if (live.text === canonicalGroupLine(g)) return [];
  return groupOps(g.buckets.length > MAX_BUCKETS_PER_MESSAGE ? 'add_or_mod' : 'modify', g);
}

/** Our groups are select groups whose first bucket is one we make. */
const isOurGroup = (g: LiveGroup) => /^group_id=\d+,type=select,bucket=bucket_id:0,weight:100,actions=set_field:/.test(g.text);

/** Group adds and changes (before the flows that name them) and deletes (after the flows that named them). */
function pairGroups(wanted: Group[], bridge: LiveBridge, notes: Diagnostic[]): { before: BundleOp[]; after: BundleOp[] } {
  const live = new Map(bridge.groups.map((g) => [g.id, g]));
  const before = wanted.flatMap((g) => groupChange(g, live.get(g.id)));
  const ids = new Set(wanted.map((g) => g.id));
  const after: BundleOp[] = [];
  for (const g of [...bridge.groups].sort((a, b) => a.id - b.id)) {
    if (ids.has(g.id)) continue;
    if (isOurGroup(g)) after.push({ verb: 'delete', target: 'group', id: g.id });
    else notes.push(note(bridge.files.groups, g.line, `group ${g.id} is not kproxc's; left alone`));
  }
  return { before, after };
}

/** The bundle from the live bridge to the compiled program (compileOvsDumpForm, given the bridge's flows). */
export function diffOvs<Owner>(compiled: DumpProgram<Owner>, bridge: LiveBridge): OvsDiff {
  const notes = [...bridge.notes];
  const wantedGroups = compiled.groupValues();
  const pairs = pairFlows(compiled, bridge);
  const deletes = staleFlows(bridge, pairs, wantedGroups, notes);
  const { before, after } = pairGroups(wantedGroups, bridge, notes);
  return { ops: [...before, ...deletes, ...pairs.modifies, ...pairs.adds, ...after], notes };
}
