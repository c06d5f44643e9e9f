// The ovs-ofctl bundle that turns a live bridge (as dump-flows and dump-groups print it)
// into what `compile --backend ovs` would load, touching only what differs. Flows are
// paired by table, priority and match, as OVS knows them; groups by ID (stable: derived
// from the Service port). Learned affinity flows stay while they still lead where the
// compiled state goes; flows and groups that are not ours are left alone and reported.
import type { Diagnostic } from '../../diag/diagnostic.js';
import type { OvsProgram } from '../../backends/ovs/index.js';
import { MAX_BUCKETS_PER_MESSAGE, actionsText, flowText, groupLines, matchText, type Flow, type Group } from '../../backends/ovs/openflow.js';
import { SERVICE_COOKIE, TABLE } from '../../backends/ovs/pipeline.js';
import type { LiveFlow, LiveGroup } from '../../live/ovs/dump-read.js';
import { canonicalActions, canonicalFlowKey, canonicalGroupLine, canonicalMatch, ovsHex } from './canonical.js';
import { isLearned, keepLearned, learnedIndex } from './learned.js';

const OUR_TABLES = new Set<number>(Object.values(TABLE));
const COOKIE_HIGH = SERVICE_COOKIE >> 32n;

export interface LiveFiles {
  flows: string;
  groups: string;
}

export interface OvsDiff {
  /** The bundle's lines: group adds and changes, flow deletes, changes and adds, group deletes. */
  lines: string[];
  /** Flows and groups left alone because they are not ours, one note each. */
  notes: Diagnostic[];
}

/** A flow of ours: one of our tables, our cookie or a group's learn cookie. */
function isOurs(f: LiveFlow): boolean {
  return OUR_TABLES.has(f.table) && f.cookie >> 32n === COOKIE_HIGH;
}

/** Our groups are select groups whose first bucket is one we make. */
function isOurGroup(g: LiveGroup): boolean {
  return /^group_id=\d+,type=select,bucket=bucket_id:0,weight:100,actions=set_field:/.test(g.text);
}

function note(file: string, line: number, message: string): Diagnostic {
  return { severity: 'warning', pos: { file, line, col: 1 }, message };
}

interface Wanted {
  flow: Flow;
  match: string;
  actions: string;
}

/** The compiled flows by table and key (priority and match, printed as OVS prints them). */
function wantedFlows(program: OvsProgram): Map<string, Wanted> {
  const out = new Map<string, Wanted>();
  for (const { flow } of program.flows) {
    const match = canonicalMatch(flow);
    out.set(`${flow.table} ${canonicalFlowKey(flow, match)}`, { flow, match, actions: canonicalActions(flow.actions) });
  }
  return out;
}

/** Lines that make the live group hold the compiled one, or none when it already does. */
function groupChange(g: Group, live: LiveGroup | undefined): string[] {
  const all = groupLines(g);
  if (!live) return all;
  // A group over one message's buckets: the dump may have cut it (its reply length wraps
  // at 64 KiB), so only a whole, equal print is trusted.
  if (live.text === canonicalGroupLine(g)) return [];
  all[0] = all[0].replace(/^group add /, g.buckets.length > MAX_BUCKETS_PER_MESSAGE ? 'group add_or_mod ' : 'group modify ');
  return all;
}

function flowHead(f: Flow, match: string): string {
  return match === '' ? `table=${f.table},priority=${f.priority}` : `table=${f.table},priority=${f.priority},${match}`;
}

type Verdict = 'same' | 'modify' | 'add';

/** Live flows paired with the compiled ones; what is not ours is noted, what is ours and not wanted is deleted. */
function pairFlows(wanted: Map<string, Wanted>, flows: LiveFlow[], program: OvsProgram, files: LiveFiles, notes: Diagnostic[]) {
  const learned = learnedIndex(program.groups, program.flows.map((f) => f.flow));
  const verdicts = new Map<string, Verdict>();
  const deletes: LiveFlow[] = [];
  for (const f of flows) {
    if (!isOurs(f)) {
      notes.push(note(files.flows, f.line, `table ${f.table} flow ${f.key} (cookie ${ovsHex(f.cookie)}) is not kproxc's; left alone`));
      continue;
    }
    if (isLearned(f, SERVICE_COOKIE)) {
      const keep = keepLearned(f, learned);
      if (keep === undefined) notes.push(note(files.flows, f.line, `table ${f.table} flow ${f.key} is not one kproxc's learn actions make; left alone`));
      else if (!keep) deletes.push(f);
      continue;
    }
    const key = `${f.table} ${f.key}`;
    const w = wanted.get(key);
    if (!w) deletes.push(f);
    // An add replaces the flow, cookie and all; a modify keeps the cookie.
    else if (!verdicts.has(key)) verdicts.set(key, w.flow.cookie !== f.cookie ? 'add' : w.actions !== f.actions ? 'modify' : 'same');
  }
  return { verdicts, deletes };
}

function deleteLines(deletes: LiveFlow[]): string[] {
  return deletes
    .sort((a, b) => a.table - b.table || b.priority - a.priority || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((f) => `flow delete_strict table=${f.table},${f.key}`);
}

/** Group adds and changes (before the flows that name them) and deletes (after the flows that named them). */
function pairGroups(program: OvsProgram, groups: LiveGroup[], files: LiveFiles, notes: Diagnostic[]) {
  const live = new Map(groups.map((g) => [g.id, g]));
  const before = program.groups.flatMap((g) => groupChange(g, live.get(g.id)));
  const wanted = new Set(program.groups.map((g) => g.id));
  const after: string[] = [];
  for (const g of [...groups].sort((a, b) => a.id - b.id)) {
    if (wanted.has(g.id)) continue;
    if (isOurGroup(g)) after.push(`group delete group_id=${g.id}`);
    else notes.push(note(files.groups, g.line, `group ${g.id} is not kproxc's; left alone`));
  }
  return { before, after };
}

/** The bundle from the live flows and groups to the program. */
export function diffOvs(program: OvsProgram, flows: LiveFlow[], groups: LiveGroup[], files: LiveFiles): OvsDiff {
  const notes: Diagnostic[] = [];
  const wanted = wantedFlows(program);
  const { verdicts, deletes } = pairFlows(wanted, flows, program, files, notes);
  const { before, after } = pairGroups(program, groups, files, notes);
  const modifies: string[] = [];
  const adds: string[] = [];
  for (const [key, w] of wanted) {
    const v = verdicts.get(key) ?? 'add';
    if (v === 'modify') modifies.push(`flow modify_strict ${flowHead(w.flow, matchText(w.flow))} actions=${actionsText(w.flow.actions)}`);
    else if (v === 'add') adds.push(flowText(w.flow));
  }
  return { lines: [...before, ...deleteLines(deletes), ...modifies, ...adds, ...after], notes };
}
