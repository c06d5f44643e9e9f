// A packet's way across the bridge: a pass from table 0, then, in order, each instance a
// ct(table=N) action sent through conntrack resumes at table N with its ct fields set
// (registers travel with it). The branch's outcome is what all its passes did: a
// packet-in for a Service without endpoints is a reject; no output at all is a drop;
// otherwise the packet was switched on (DNATed or not). A hairpin SNAT is our masquerade.
import { TABLE } from '../../ovs/pipeline.js';
import { hostPort } from '../packet.js';
import type { Branch, Verdict } from '../result.js';
import { tableName } from './describe.js';
import { runTable, type Walk } from './exec.js';
import type { Program } from './program.js';
import { copyFields, record, type OvsState } from './state.js';

function finish(s: OvsState): Branch[] {
  if (s.aborted) record(s, { hook: 'bridge', action: s.aborted });
  else if (s.outputs.length === 0) record(s, { hook: 'bridge', action: 'no output action ran: OVS drops the packet' });
  const verdict: Verdict = s.outputs.includes('reject') ? 'reject' : s.outputs.length === 0 || s.aborted ? 'drop' : s.dnat ? 'dnat' : 'none';
  const b: Branch = { verdict, masquerade: s.snat !== undefined, path: s.path };
  if (verdict === 'dnat' && s.dnat) b.endpoint = hostPort(s.dnat.ip, s.dnat.port);
  return [b];
}

function resumeWords(s: OvsState, what: string): string {
  const ct = s.pkt.ct!;
  const flags = [...ct.flags].sort().map((f) => `+${f}`).join('');
  const pkt = `${s.pkt.protocol} ${hostPort(s.pkt.src, s.pkt.sport)} → ${hostPort(s.pkt.dst, s.pkt.dport)}`;
  return `back from conntrack zone ${ct.zone} (${what}): ct_state ${flags}, ct_mark 0x${(ct.mark >>> 0).toString(16)}; packet ${pkt}`;
}

function pass(w: Walk, table: number, s: OvsState): Branch[] {
  return runTable(w, table, s, (end) => nextPass(w, end));
}

function nextPass(w: Walk, s: OvsState): Branch[] {
  const r = s.pending.shift();
  if (!r) return finish(s);
  s.pkt = copyFields(r.pkt);
  record(s, { hook: `table ${r.table}`, chain: tableName(r.table), action: resumeWords(s, r.what) });
  return pass(w, r.table, s);
}

/** Every branch the packet can take from table 0 (a select group forks it per bucket). */
export function walkBridge(program: Program, s: OvsState): Branch[] {
  return pass({ program, abort: finish }, TABLE.classifier, s);
}

