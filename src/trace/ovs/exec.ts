// Tables and actions as OVS runs them for one packet instance, in continuation style so
// that a select group can fork the walk mid-way: every bucket's branch finishes its bucket,
// returns through the resubmits it is nested in, and runs to its own end. The highest
// priority matching flow of a table runs; a table with no matching flow does nothing.
// Every kind of Action has an entry here (a new kind fails the build until it has one).
import { InternalError } from '../../diag/diagnostic.js';
import { addressBits } from '../../net/ip.js';
import type { Action, Group } from '../../ovs/openflow.js';
import { NO_ENDPOINT_USERDATA } from '../../ovs/pipeline.js';
import type { Branch } from '../result.js';
import { checkCt, runCt } from './conntrack.js';
import { bucketWords, flowWords, tableName } from './describe.js';
import type { IndexedFlow, Program } from './program.js';
import { forkState, ipValue, record, regWidth, writeReg, type Fields, type OvsState } from './state.js';

/** What happens after an action list (or table) is done with the packet: the rest of the walk. */
export type K = (s: OvsState) => Branch[];
type Finish = (s: OvsState) => Branch[];

/** OVS stops a packet whose resubmits nest deeper than this (ofproto-dpif-xlate's MAX_DEPTH). */
export const MAX_DEPTH = 64;

interface Walk {
  program: Program;
  /** Ends the branch where it stands (OVS stopped processing it). */
  abort: Finish;
}

interface ActionSpec<A> {
  /** Throws InternalError for a form the tracer cannot evaluate; table is undefined in a bucket. */
  check?: (a: A, table: number | undefined, groups: Map<number, Group>) => void;
  run: (w: Walk, a: A, s: OvsState, k: K) => Branch[];
}

type Specs = { [T in Action['t']]: ActionSpec<Extract<Action, { t: T }>> };

/** Everything a flow can branch on: a repeat while nested in itself is a loop. */
function stateKey(table: number, f: Fields): string {
  const ct = f.ct ? `${[...f.ct.flags].sort().join('+')}/${f.ct.mark}/${f.ct.zone}` : '-';
  return `${table}|${f.regs.join(',')}|${f.src.bytes.join('.')}|${f.dst.bytes.join('.')}|${f.sport}|${f.dport}|${ct}`;
}

function resubmit(w: Walk, table: number, s: OvsState, k: K): Branch[] {
  const key = stateKey(table, s.pkt);
  if (s.stack.includes(key) || s.stack.length >= MAX_DEPTH) {
    s.aborted = `resubmit to table ${table} loops: OVS stops at its resubmit limit (${MAX_DEPTH}) and drops the packet`;
    return w.abort(s);
  }
  s.stack.push(key);
  return runTable(w, table, s, (after) => {
    after.stack.pop();
    return k(after);
  });
}

function runGroup(w: Walk, g: Group, s: OvsState, k: K): Branch[] {
  // A select group is not resolved to one bucket: each bucket is a branch of its own.
  return g.buckets.flatMap((b, i) => {
    const branch = g.buckets.length === 1 ? s : forkState(s);
    record(branch, { hook: `group ${g.id}`, action: bucketWords(g, i, w.program.groups) });
    return runActions(w, b.actions, 0, branch, k);
  });
}

function setFieldCheck(a: Extract<Action, { t: 'set-field' }>): void {
  if (a.field === 'ct_mark') throw new InternalError('set_field to ct_mark outside ct(exec(...)): OVS rejects it');
  const width = BigInt(regWidth(a.field));
  if (BigInt(a.value) >> width !== 0n || (a.mask !== undefined && (BigInt(a.value) & ~BigInt(a.mask)) !== 0n)) {
    throw new InternalError(`set_field 0x${a.value.toString(16)} does not fit ${a.field}${a.mask !== undefined ? ` under mask 0x${a.mask.toString(16)}` : ''}`);
  }
}

const SPECS: Specs = {
  output: {
    check: (a) => {
      if (a.port !== 'NORMAL' && a.port !== 'IN_PORT') throw new InternalError(`output to ${String(a.port)}: the tracer knows NORMAL and IN_PORT`);
    },
    run: (_w, a, s, k) => (s.outputs.push(a.port), k(s)),
  },
  // `actions=drop` is an empty action list: nothing more happens in this flow.
  drop: { run: (_w, _a, s, k) => k(s) },
  'goto-table': {
    check: (a, table) => {
      if (table === undefined || a.table <= table) throw new InternalError(`goto_table:${a.table} must move forward (from table ${table ?? 'a group'})`);
    },
    // goto_table is the last instruction: the flow's actions end in the next table.
    run: (w, a, s, k) => runTable(w, a.table, s, k),
  },
  resubmit: { run: (w, a, s, k) => resubmit(w, a.table, s, k) },
  group: {
    check: (a, _t, groups) => {
      if (!groups.has(a.id)) throw new InternalError(`group:${a.id} names no group`);
    },
    run: (w, a, s, k) => runGroup(w, w.program.groups.get(a.id)!, s, k),
  },
  'set-field': {
    check: setFieldCheck,
    run: (_w, a, s, k) => {
      writeReg(s.pkt, a.field as Exclude<typeof a.field, 'ct_mark'>, BigInt(a.value), a.mask === undefined ? undefined : BigInt(a.mask));
      return k(s);
    },
  },
  'set-ip': {
    check: (a) => {
      if (addressBits(a.ip.family) > regWidth(a.field)) throw new InternalError(`an IPv${a.ip.family} address does not fit ${a.field}`);
    },
    run: (_w, a, s, k) => (writeReg(s.pkt, a.field, ipValue(a.ip)), k(s)),
  },
  ct: {
    check: checkCt,
    // The packet forks: this instance goes on untracked; the other resumes at a.table
    // once this pass is over.
    run: (_w, a, s, k) => {
      const { resumed, what } = runCt(s, a);
      s.pending.push({ table: a.table, zone: a.zone, pkt: resumed, what });
      return k(s);
    },
  },
  controller: {
    check: (a) => {
      if (a.reason !== 'no_match' || a.userdata !== NO_ENDPOINT_USERDATA) {
        throw new InternalError(`controller(reason=${a.reason},userdata=${a.userdata}): the tracer knows only the no-endpoint reject (userdata=${NO_ENDPOINT_USERDATA})`);
      }
    },
    // Antrea's agent answers this packet-in with a TCP reset or ICMP unreachable.
    run: (_w, _a, s, k) => (s.outputs.push('reject'), k(s)),
  },
  learn: {
    check: (a) => {
      if (!Number.isInteger(a.learn.hardTimeout) || a.learn.hardTimeout < 0 || a.learn.hardTimeout > 65535) {
        throw new InternalError(`learn hard_timeout ${a.learn.hardTimeout} is out of range`);
      }
    },
    // The learned flow serves this client's later connections; a trace follows the first
    // one (as ofproto/trace does, which does not run learn either).
    run: (_w, _a, s, k) => k(s),
  },
};

export const TRACED_ACTION_KINDS = new Set(Object.keys(SPECS));

function spec(a: Action): ActionSpec<Action> {
  const sp = SPECS[a.t] as ActionSpec<Action> | undefined;
  if (!sp) throw new InternalError(`the tracer cannot evaluate the action ${a.t}`);
  return sp;
}

export function checkAction(a: Action, table: number | undefined, groups: Map<number, Group>): void {
  spec(a).check?.(a, table, groups);
}

export function runActions(w: Walk, actions: Action[], i: number, s: OvsState, k: K): Branch[] {
  if (i === actions.length) return k(s);
  return spec(actions[i]).run(w, actions[i], s, (next) => runActions(w, actions, i + 1, next, k));
}

function applyFlow(w: Walk, f: IndexedFlow, s: OvsState, k: K): Branch[] {
  record(s, { hook: `table ${f.flow.table}`, chain: tableName(f.flow.table), rule: f.rule, action: flowWords(f.flow, f.owner, w.program.groups) });
  return runActions(w, f.flow.actions, 0, s, k);
}

/** The highest-priority flows of the table that match; several only when they overlap at one priority. */
function matching(flows: IndexedFlow[], f: Fields): IndexedFlow[] {
  const hits: IndexedFlow[] = [];
  for (const x of flows) {
    if (hits.length > 0 && x.flow.priority < hits[0].flow.priority) break;
    if (x.matches.every((m) => m(f))) hits.push(x);
  }
  return hits;
}

export function runTable(w: Walk, table: number, s: OvsState, k: K): Branch[] {
  const hits = matching(w.program.table(table), s.pkt);
  if (hits.length === 0) {
    record(s, { hook: `table ${table}`, chain: tableName(table), action: 'no flow matched: nothing done in this table' });
    return k(s);
  }
  if (hits.length === 1) return applyFlow(w, hits[0], s, k);
  // OVS picks one of overlapping flows of equal priority, unpredictably: follow each.
  return hits.map((f) => {
    const branch = forkState(s);
    record(branch, { hook: `table ${table}`, chain: tableName(table), action: `${hits.length} flows of priority ${f.flow.priority} match: OVS runs one of them, each is followed` });
    return applyFlow(w, f, branch, k);
  }).flat();
}

export type { Walk };
