// What `ovs-ofctl -O OpenFlow15 [--no-stats] dump-flows BRIDGE` and `dump-groups BRIDGE`
// print (OVS 3.1), read into flows and groups kept as the text OVS printed: the diff
// compares them with the compiled state printed the same way (src/backends/ovs/canonical.ts).
// A line that is not one of these shapes is an error with its line and column: a listing
// read wrongly would make a wrong bundle.
import { UserInputError, quoteText, type Diagnostic } from '../../diag/diagnostic.js';

export interface LiveFlow {
  line: number;
  /** As printed: `0x...`, or `0` when the dump leaves it out. */
  cookie: string;
  table: number;
  priority: number;
  hardTimeout?: number;
  /** `priority=P` and the match, as the dump prints them: the flow's identity in its table. */
  key: string;
  /** The match alone ('' for none). */
  match: string;
  actions: string;
}

export interface LiveGroup {
  line: number;
  id: number;
  /** The whole line as printed, without its leading space. */
  text: string;
}

/** Header fields before the priority and match; the counters appear without --no-stats. */
const NUMBER_FIELDS = new Set(['duration', 'n_packets', 'n_bytes', 'idle_timeout', 'hard_timeout', 'idle_age', 'hard_age', 'importance']);
const FLAG_FIELDS = new Set(['send_flow_rem', 'check_overlap', 'reset_counts', 'no_packet_counts', 'no_byte_counts']);
const HEADER = /^(OFPST_FLOW|NXST_FLOW|OFPST_GROUP_DESC) reply \(OF[0-9.]+\) \(xid=0x[0-9a-f]+\):( flags=\[more\])?$/;
const DEFAULT_PRIORITY = 32768;

function fail(file: string, line: number, col: number, message: string): never {
  const d: Diagnostic = { severity: 'error', pos: { file, line, col }, message };
  throw new UserInputError([d]);
}

function decimal(s: string, max: number): number | undefined {
  if (!/^\d{1,10}$/.test(s)) return undefined;
  const n = Number(s);
  return n <= max ? n : undefined;
}

/** Lines of a dump, each with its number; `\r\n` endings are read as `\n`. */
function lines(text: string): string[] {
  return text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

interface Header {
  cookie: string;
  table: number;
  hardTimeout?: number;
  /** Column (0-based) where the priority and match begin. */
  rest: number;
}

/** A header token: `name=value` of a known field, or a flag (which OVS ends with a space, not ", "). */
function isHeaderToken(t: string): boolean {
  const eq = t.indexOf('=');
  if (eq < 0) return FLAG_FIELDS.has(t);
  const name = t.slice(0, eq);
  return name === 'cookie' || name === 'table' || NUMBER_FIELDS.has(name);
}

function readToken(h: Header, t: string, file: string, n: number, col: number): void {
  const eq = t.indexOf('=');
  if (eq < 0) return; // a flag
  const name = t.slice(0, eq);
  const val = t.slice(eq + 1);
  if (name === 'cookie') {
    if (!/^0x[0-9a-f]{1,16}$/.test(val)) fail(file, n, col, `cookie ${quoteText(val)}: not a cookie as ovs-ofctl prints it`);
    h.cookie = val;
  } else if (name === 'table') {
    const v = decimal(val, 254);
    if (v === undefined) fail(file, n, col, `table ${quoteText(val)}: not a table number`);
    h.table = v;
  } else if (name === 'hard_timeout') {
    const v = decimal(val, 65535);
    if (v === undefined) fail(file, n, col, `hard_timeout ${quoteText(val)}: not a timeout`);
    h.hardTimeout = v;
  } else if (!/^\d+(\.\d+)?s?$/.test(val)) {
    fail(file, n, col, `${quoteText(t)}: not a ${name} field as ovs-ofctl prints it`);
  }
}

/** ` cookie=0x..., duration=..., table=N, ..., ` up to the priority or the match. */
function readHeader(l: string, file: string, n: number): Header {
  const h: Header = { cookie: '0', table: 0, rest: 1 };
  let at = 1;
  for (;;) {
    const end = l.indexOf(', ', at);
    if (end < 0) break;
    const tokens = l.slice(at, end).split(' ');
    // The priority, the match and the actions hold no header token: they start here.
    if (!tokens.every(isHeaderToken)) break;
    let col = at + 1;
    for (const t of tokens) {
      readToken(h, t, file, n, col);
      col += t.length + 1;
    }
    at = end + 2;
  }
  h.rest = at;
  return h;
}

function readFlow(l: string, file: string, n: number): LiveFlow {
  const h = readHeader(l, file, n);
  // With neither priority nor match the actions follow the header directly.
  const act = l.startsWith('actions=', h.rest) ? h.rest - 1 : l.indexOf(' actions=', h.rest);
  if (act < 0) fail(file, n, h.rest + 1, 'a flow without actions= (not a line of ovs-ofctl dump-flows)');
  let key = act < h.rest ? '' : l.slice(h.rest, act);
  if (key.includes(' ')) fail(file, n, h.rest + key.indexOf(' ') + 1, 'a space inside the match (not a line of ovs-ofctl dump-flows)');
  let priority = DEFAULT_PRIORITY;
  let match = key;
  const p = /^priority=(\d+)(,|$)/.exec(key);
  if (p) {
    const v = decimal(p[1], 65535);
    if (v === undefined) fail(file, n, h.rest + 10, `priority ${quoteText(p[1])}: not a priority`);
    priority = v;
    match = key.slice(p[0].length);
  } else {
    key = match === '' ? `priority=${DEFAULT_PRIORITY}` : `priority=${DEFAULT_PRIORITY},${match}`;
  }
  if (match.endsWith(',') || match.startsWith(',')) fail(file, n, h.rest + 1, 'an empty field in the match');
  const actions = l.slice(act + ' actions='.length);
  if (actions === '' || actions.includes(' ')) fail(file, n, act + 10, 'actions that are not one word (not a line of ovs-ofctl dump-flows)');
  return { line: n, cookie: h.cookie, table: h.table, priority, hardTimeout: h.hardTimeout, key, match, actions };
}

/** Every flow of a dump-flows listing, in the order listed. */
export function readFlowDump(text: string, file: string): LiveFlow[] {
  const out: LiveFlow[] = [];
  lines(text).forEach((l, i) => {
    const n = i + 1;
    if (l === '' || HEADER.test(l)) return;
    if (!l.startsWith(' ')) fail(file, n, 1, `${quoteText(l)}: not a line of ovs-ofctl dump-flows`);
    out.push(readFlow(l, file, n));
  });
  return out;
}

/** Every group of a dump-groups listing, in the order listed. */
export function readGroupDump(text: string, file: string): LiveGroup[] {
  const out: LiveGroup[] = [];
  const seen = new Set<number>();
  lines(text).forEach((l, i) => {
    const n = i + 1;
    if (l === '' || HEADER.test(l)) return;
    if (l.includes('***decode error')) {
      // ovs-ofctl cannot print a group whose description passes one 64 KiB reply.
      fail(file, n, l.indexOf('***') + 1, 'ovs-ofctl could not print a group here (a group of more buckets than one reply holds); this listing cannot be diffed');
    }
    const m = /^ group_id=(\d+),type=[a-z_]+(,|$)/.exec(l);
    if (!m) fail(file, n, 1, `${quoteText(l)}: not a line of ovs-ofctl dump-groups`);
    const id = decimal(m[1], 0xffffffff);
    if (id === undefined) fail(file, n, 11, `group_id ${quoteText(m[1])}: not a group number`);
    if (l.includes(' ', 1)) fail(file, n, l.indexOf(' ', 1) + 1, 'a space inside a group (not a line of ovs-ofctl dump-groups)');
    if (seen.has(id)) fail(file, n, 2, `group ${id} is listed twice`);
    seen.add(id);
    out.push({ line: n, id, text: l.slice(1) });
  });
  return out;
}
