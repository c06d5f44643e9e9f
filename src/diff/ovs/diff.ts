// The ovs-ofctl bundle that turns a live bridge (as dump-flows and dump-groups print it)
// into what `compile --backend ovs` would load, touching only what differs. Flows are
// paired by table, priority and match as OVS prints them; groups by ID (stable: derived
// from the Service port). Learned affinity flows stay while they still lead where the
// compiled state goes; flows and groups that are not ours are left alone and reported.
//
// The live dump is read first and each compiled flow is compared as the compile makes it,
// so that only the values of flows that change are kept: at 10,000 Services the others
// are some 130,000 trees of objects the collector would otherwise carry to the end.
import type { Diagnostic } from '../../diag/diagnostic.js';
import type { Bundle, FlowPrinter } from '../../backends/ovs/bundle.js';
import { MAX_BUCKETS_PER_MESSAGE, actionsText, flowText, groupLines, matchText, type Flow, type Group } from '../../backends/ovs/openflow.js';
import { SERVICE_COOKIE, TABLE } from '../../backends/ovs/pipeline.js';
import type { ServicePort } from '../../model/types.js';
import type { LiveFlow, LiveGroup } from '../../live/ovs/dump-read.js';
import { canonicalActions, canonicalGroupLine, canonicalMatch, cookieHex } from '../../backends/ovs/canonical.js';
import { addLearn, groupEndpoints, isLearned, keepLearned, type LearnSpec } from './learned.js';

const OUR_TABLES = new Set<number>(Object.values(TABLE));
const SERVICE_COOKIE_TEXT = cookieHex(SERVICE_COOKIE);
/** Our cookie and the learn cookies (our cookie | group ID) print as 0x10300 and 8 hex digits. */
const isOurCookie = (c: string) => c.length === 15 && c.startsWith('0x10300');

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

type Compiled = Bundle<ServicePort | undefined>;

function note(file: string, line: number, message: string): Diagnostic {
  return { severity: 'warning', pos: { file, line, col: 1 }, message };
}

const place = (table: number, priority: number) => table * 65536 + (65535 - priority);

/** Our live flows by place and match, and learned ones aside; others' flows noted. */
class LiveIndex {
  readonly byPlace = new Map<number, Map<string, LiveFlow>>();
  readonly learned: LiveFlow[] = [];
  readonly matched = new Set<LiveFlow>();

  constructor(flows: LiveFlow[], file: string, notes: Diagnostic[]) {
    for (const f of flows) {
      if (!OUR_TABLES.has(f.table) || !isOurCookie(f.cookie)) {
        notes.push(note(file, f.line, `table ${f.table} flow ${f.key} (cookie ${f.cookie}) is not kproxc's; left alone`));
      } else if (isLearned(f, SERVICE_COOKIE_TEXT)) {
        this.learned.push(f);
      } else {
        const p = place(f.table, f.priority);
        let same = this.byPlace.get(p);
        if (!same) this.byPlace.set(p, (same = new Map()));
        same.set(f.match, f);
      }
    }
  }

  find(f: Flow, match: string): LiveFlow | undefined {
    return this.byPlace.get(place(f.table, f.priority))?.get(match);
  }
}

/**
 * The printer the compile runs with: flows known by their dump form, and a compiled flow's
 * value kept only when the live bridge lacks it or holds it otherwise (and for learn flows,
 * which say what learned flows may stay).
 */
function diffPrinter(live: LiveIndex, learns: Map<string, LearnSpec[]>): FlowPrinter {
  return {
    match: canonicalMatch,
    text: (f) => canonicalActions(f.actions),
    groupLines: false,
    keep(f, match, actions) {
      addLearn(learns, f);
      const l = live.find(f, match);
      if (!l) return true;
      live.matched.add(l);
      return l.cookie !== cookieHex(f.cookie) || l.actions !== actions;
    },
  };
}

/** Lines that make the live group hold the compiled one, or none when it already does. */
function groupChange(g: Group, live: LiveGroup | undefined): string[] {
  const all = groupLines(g);
  if (!live) return all;
  // A group over one message's buckets: the dump may have cut it (its reply length wraps
  // at 64 KiB), so only a whole, equal print is trusted; add_or_mod then rewrites it.
  if (live.text === canonicalGroupLine(g)) return [];
  all[0] = all[0].replace(/^group add /, g.buckets.length > MAX_BUCKETS_PER_MESSAGE ? 'group add_or_mod ' : 'group modify ');
  return all;
}

/** Our groups are select groups whose first bucket is one we make. */
const isOurGroup = (g: LiveGroup) => /^group_id=\d+,type=select,bucket=bucket_id:0,weight:100,actions=set_field:/.test(g.text);

/** Group adds and changes (before the flows that name them) and deletes (after the flows that named them). */
function pairGroups(wanted: Group[], groups: LiveGroup[], file: string, notes: Diagnostic[]) {
  const live = new Map(groups.map((g) => [g.id, g]));
  const before = wanted.flatMap((g) => groupChange(g, live.get(g.id)));
  const ids = new Set(wanted.map((g) => g.id));
  const after: string[] = [];
  for (const g of [...groups].sort((a, b) => a.id - b.id)) {
    if (ids.has(g.id)) continue;
    if (isOurGroup(g)) after.push(`group delete group_id=${g.id}`);
    else notes.push(note(file, g.line, `group ${g.id} is not kproxc's; left alone`));
  }
  return { before, after };
}

const byPlaceAndKey = (a: LiveFlow, b: LiveFlow) => a.table - b.table || b.priority - a.priority || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function flowHead(f: Flow): string {
  const match = matchText(f);
  return match === '' ? `table=${f.table},priority=${f.priority}` : `table=${f.table},priority=${f.priority},${match}`;
}

/**
 * The bundle from the live flows and groups to the compiled state; `compile` builds the
 * bundle of values with the printer it is given (compileOvsValues).
 */
export function diffOvs(compile: (printer: FlowPrinter) => Compiled, flows: LiveFlow[], groups: LiveGroup[], files: LiveFiles): OvsDiff {
  const notes: Diagnostic[] = [];
  const live = new LiveIndex(flows, files.flows, notes);
  const learns = new Map<string, LearnSpec[]>();
  const bundle = compile(diffPrinter(live, learns));
  const wantedGroups = bundle.groupValues();
  const deletes: LiveFlow[] = [];
  for (const same of live.byPlace.values()) for (const f of same.values()) if (!live.matched.has(f)) deletes.push(f);
  const learned = { endpoints: groupEndpoints(wantedGroups), learns };
  for (const f of live.learned) {
    const keep = keepLearned(f, learned);
    if (keep === undefined) notes.push(note(files.flows, f.line, `table ${f.table} flow ${f.key} is not one kproxc's learn actions make; left alone`));
    else if (!keep) deletes.push(f);
  }
  const modifies: string[] = [];
  const adds: string[] = [];
  bundle.eachKept((k, match) => {
    const f = k.flow;
    if (!f) return;
    const l = live.find(f, match);
    if (l && l.cookie === cookieHex(f.cookie)) {
      if (l.actions !== k.text) modifies.push(`flow modify_strict ${flowHead(f)} actions=${actionsText(f.actions)}`);
    } else adds.push(flowText(f)); // an add replaces a flow of another cookie, cookie and all
  });
  const { before, after } = pairGroups(wantedGroups, groups, files.groups, notes);
  const deleteLines = deletes.sort(byPlaceAndKey).map((f) => `flow delete_strict table=${f.table},${f.key}`);
  return { lines: [...before, ...deleteLines, ...modifies, ...adds, ...after], notes };
}
