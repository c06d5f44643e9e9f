// OpenFlow flows and groups as values, and the one place that prints them in the syntax of
// `ovs-ofctl bundle` files (OVS 3.1). Every field is printed from a parsed value (an IP, a
// CIDR, a number), never from input text, so no input can inject OpenFlow syntax.
import { InternalError } from '../../diag/diagnostic.js';
import { addressBits, formatCIDR, formatIP, hostCIDR, ipv4Hex, type CIDR, type IP } from '../../net/ip.js';

/** Protocol words: each implies its prerequisites (`tcp6` is IPv6 and TCP). */
export type ProtoWord = 'ip' | 'ipv6' | 'tcp' | 'udp' | 'sctp' | 'tcp6' | 'udp6' | 'sctp6' | 'icmp6';
export type AddrField = 'nw_src' | 'nw_dst' | 'ipv6_src' | 'ipv6_dst';
/** The registers the pipeline uses; xxreg3 is reg12..reg15 as one 128-bit field. */
export type RegField = 'reg0' | 'reg3' | 'reg4' | 'reg7' | 'xxreg3';
export type CtFlag = 'new' | 'est' | 'rel' | 'rpl' | 'inv' | 'trk' | 'snat' | 'dnat';

/**
 * One match field of a flow, as a value. Printed by matchFieldText; evaluated by the
 * OpenFlow tracer, which must know every kind.
 */
export type MatchField =
  | { t: 'proto'; word: ProtoWord }
  | { t: 'icmp-type'; type: number }
  | { t: 'addr'; field: AddrField; net: CIDR }
  | { t: 'tp-dst'; port: number }
  | { t: 'reg'; reg: RegField; value: number; mask?: number }
  /** A register holding an address (the selected endpoint), every byte printed. */
  | { t: 'reg-ip'; reg: RegField; ip: IP }
  | { t: 'ct-state'; flags: { flag: CtFlag; set: boolean }[] }
  | { t: 'ct-mark'; value: number; mask: number };

/** The NAT of a ct action: bare `nat` (replay the connection's), or a new DNAT or SNAT. */
export type Nat = { t: 'nat' } | { t: 'dnat'; ip: IP; port: number } | { t: 'snat'; ip: IP };

export type SetField = { t: 'set-field'; field: RegField | 'ct_mark'; value: number; mask?: number };

/** What a learn action loads into the learned flow: a field of this packet, or a constant. */
export type LearnLoad = { from: string; to: string } | { value: number; to: string };

export interface Learn {
  table: number;
  hardTimeout: number;
  priority: number;
  cookie: bigint;
  ethType: number;
  ipProto: number;
  /** Fields (NXM/OXM names) the learned flow matches with this packet's values. */
  copies: string[];
  loads: LearnLoad[];
}

/** One action, as a value. Printed by actionText; executed by the OpenFlow tracer. */
export type Action =
  | { t: 'output'; port: 'NORMAL' | 'IN_PORT' }
  | { t: 'drop' }
  | { t: 'goto-table'; table: number }
  | { t: 'resubmit'; table: number }
  | { t: 'group'; id: number }
  | SetField
  | { t: 'set-ip'; field: RegField; ip: IP }
  | { t: 'ct'; commit: boolean; table: number; zone: number; nat?: Nat; exec: SetField[] }
  | { t: 'controller'; reason: 'no_match'; userdata: string }
  | { t: 'learn'; learn: Learn };

export interface Flow {
  table: number;
  priority: number;
  cookie: bigint;
  match: MatchField[];
  actions: Action[];
}

export interface Bucket {
  actions: Action[];
}

export interface Group {
  id: number;
  buckets: Bucket[];
}

/**
 * A group mod must fit one OpenFlow message (64 KiB); 700 buckets of the largest kind we
 * emit (an IPv6 endpoint load) stay below it, so larger groups get the rest of their
 * buckets through `insert_bucket` lines in the same bundle.
 */
export const MAX_BUCKETS_PER_MESSAGE = 700;

/**
 * Buckets per message for a group of n: equal shares of at most MAX_BUCKETS_PER_MESSAGE.
 * Not 700 and the remainder: on OVS 3.1, after insert_bucket a select group builds its
 * dp_hash table from the inserted buckets alone when they fit 64 hash values, and then
 * never selects the others (measured: 700 + 50 buckets reached only the last 50). With
 * equal shares every insert holds more than 350 buckets, so OVS keeps its default hash
 * over all buckets.
 */
export function bucketChunkSize(n: number): number {
  return Math.ceil(n / Math.ceil(n / MAX_BUCKETS_PER_MESSAGE));
}

export function hex(n: number | bigint): string {
  return '0x' + n.toString(16);
}

/** `value/mask` as OVS prints masked register matches and loads. */
export function masked(value: number, mask: number): string {
  return `${hex(value)}/${hex(mask)}`;
}

export function ipText(ip: IP): string {
  return formatIP(ip);
}

/** An address or a network; a full-length prefix prints as a plain address. */
export function netText(c: CIDR): string {
  return c.prefix === addressBits(c.addr.family) ? formatIP(c.addr) : formatCIDR(c);
}

/** `IP:PORT`, IPv6 in brackets, as nat() wants it. */
export function hostPort(ip: IP, port: number): string {
  return ip.family === 6 ? `[${formatIP(ip)}]:${port}` : `${formatIP(ip)}:${port}`;
}

function checkFlow(f: Flow): void {
  const ok =
    Number.isInteger(f.table) && f.table >= 0 && f.table < 254 && Number.isInteger(f.priority) && f.priority >= 0 && f.priority <= 65535;
  if (!ok || f.actions.length === 0) throw new InternalError(`bad flow: table ${f.table} priority ${f.priority} actions ${f.actions.length}`);
}

const valueText = (value: number, mask?: number) => (mask === undefined ? hex(value) : masked(value, mask));

const MATCH_TEXT: { [K in MatchField['t']]: (m: Extract<MatchField, { t: K }>) => string } = {
  proto: (m) => m.word,
  'icmp-type': (m) => `icmp_type=${m.type}`,
  addr: (m) => `${m.field}=${netText(m.net)}`,
  'tp-dst': (m) => `tp_dst=${m.port}`,
  reg: (m) => `${m.reg}=${valueText(m.value, m.mask)}`,
  'reg-ip': (m) => `${m.reg}=${ipv4Hex(m.ip)}`,
  'ct-state': (m) => `ct_state=${m.flags.map((f) => `${f.set ? '+' : '-'}${f.flag}`).join('')}`,
  'ct-mark': (m) => `ct_mark=${masked(m.value, m.mask)}`,
};

export function matchFieldText(m: MatchField): string {
  const print = MATCH_TEXT[m.t] as ((m: MatchField) => string) | undefined;
  if (!print) throw new InternalError(`no syntax for match field ${JSON.stringify(m)}`);
  return print(m);
}

function natText(n: Nat): string {
  return n.t === 'nat' ? 'nat' : n.t === 'dnat' ? `nat(dst=${hostPort(n.ip, n.port)})` : `nat(src=${ipText(n.ip)})`;
}

function ctText(a: Extract<Action, { t: 'ct' }>): string {
  const parts = [...(a.commit ? ['commit'] : []), `table=${a.table}`, `zone=${a.zone}`];
  if (a.nat) parts.push(natText(a.nat));
  if (a.exec.length > 0) parts.push(`exec(${a.exec.map(actionText).join(',')})`);
  return `ct(${parts.join(',')})`;
}

function learnText(l: Learn): string {
  const spec = [
    `table=${l.table}`,
    `hard_timeout=${l.hardTimeout}`,
    `priority=${l.priority}`,
    'delete_learned',
    `cookie=${hex(l.cookie)}`,
    `eth_type=${hex(l.ethType)}`,
    `nw_proto=${l.ipProto}`,
    ...l.copies,
    ...l.loads.map((d) => `load:${'from' in d ? d.from : hex(d.value)}->${d.to}`),
  ];
  return `learn(${spec.join(',')})`;
}

const ACTION_TEXT: { [K in Action['t']]: (a: Extract<Action, { t: K }>) => string } = {
  output: (a) => a.port,
  drop: () => 'drop',
  'goto-table': (a) => `goto_table:${a.table}`,
  resubmit: (a) => `resubmit(,${a.table})`,
  group: (a) => `group:${a.id}`,
  'set-field': (a) => `set_field:${valueText(a.value, a.mask)}->${a.field}`,
  'set-ip': (a) => `set_field:${ipv4Hex(a.ip)}->${a.field}`,
  ct: ctText,
  controller: (a) => `controller(reason=${a.reason},userdata=${a.userdata})`,
  learn: (a) => learnText(a.learn),
};

export function actionText(a: Action): string {
  const print = ACTION_TEXT[a.t] as ((a: Action) => string) | undefined;
  if (!print) throw new InternalError(`no syntax for action ${JSON.stringify(a)}`);
  return print(a);
}

/** The match part, also the identity of a flow within its table and priority. */
export function matchText(f: Flow): string {
  return f.match.map(matchFieldText).join(',');
}

export function actionsText(actions: Action[]): string {
  return actions.map(actionText).join(',');
}

// A bundle has a few cookies and a quarter of a million flows: print each cookie once.
const cookieTexts = new Map<bigint, string>();
function cookieText(cookie: bigint): string {
  let t = cookieTexts.get(cookie);
  if (t === undefined) cookieTexts.set(cookie, (t = `cookie=${hex(cookie)}`));
  return t;
}

/** The `flow add` line; `match` is matchText(f), for a caller that already has it. */
export function flowText(f: Flow, match: string = matchText(f)): string {
  checkFlow(f);
  const head = `${cookieText(f.cookie)},table=${f.table},priority=${f.priority}`;
  return `flow add ${match === '' ? head : `${head},${match}`} actions=${actionsText(f.actions)}`;
}

function bucketText(b: Bucket, id: number): string {
  return `bucket=bucket_id:${id},weight:100,actions=${actionsText(b.actions)}`;
}

/** `group add` with the first share of buckets, then an `insert_bucket` line per further share. */
export function groupLines(g: Group): string[] {
  if (g.buckets.length === 0) throw new InternalError(`group ${g.id} has no bucket`);
  const lines: string[] = [];
  const size = bucketChunkSize(g.buckets.length);
  for (let start = 0; start < g.buckets.length; start += size) {
    const chunk = g.buckets.slice(start, start + size).map((b, i) => bucketText(b, start + i));
    lines.push(
      start === 0
        ? `group add group_id=${g.id},type=select,${chunk.join(',')}`
        : `group insert_bucket group_id=${g.id},command_bucket_id=last,${chunk.join(',')}`,
    );
  }
  return lines;
}

// Constructors, so that flows read close to the syntax they print as.

export const NORMAL: Action = { t: 'output', port: 'NORMAL' };
export const IN_PORT: Action = { t: 'output', port: 'IN_PORT' };
export const DROP: Action = { t: 'drop' };
export const groupAction = (id: number): Action => ({ t: 'group', id });

export const proto = (word: ProtoWord): MatchField => ({ t: 'proto', word });
export const tpDst = (port: number): MatchField => ({ t: 'tp-dst', port });

/** An address (a full-length prefix) or a network. */
export function addr(field: AddrField, net: IP | CIDR): MatchField {
  return { t: 'addr', field, net: 'prefix' in net ? net : hostCIDR(net) };
}

/** `ct_state=+new+trk`, written ctState('+new', '+trk'). */
export function ctState(...terms: `${'+' | '-'}${CtFlag}`[]): MatchField {
  return { t: 'ct-state', flags: terms.map((x) => ({ flag: x.slice(1) as CtFlag, set: x[0] === '+' })) };
}

export interface CtAction {
  commit?: boolean;
  table: number;
  zone: number;
  nat?: Nat;
  exec?: SetField[];
}

export function ct(c: CtAction): Action {
  return { t: 'ct', commit: c.commit === true, table: c.table, zone: c.zone, ...(c.nat ? { nat: c.nat } : {}), exec: c.exec ?? [] };
}
