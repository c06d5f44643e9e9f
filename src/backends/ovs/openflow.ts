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

// Printing: each text is made of pieces pushed onto one list and joined once, which gives
// one flat string. Texts built by `+` or template literals are trees of pieces, which the
// bundle's map and its sort must first copy into one; at 10,000 Services that is some
// 140,000 flow lines, and the many small arrays of building each part on its own were
// most of the backend's garbage.
type Parts = string[];

/** What `write` pushes, as one string. */
function joined(write: (o: Parts) => void): string {
  const o: Parts = [];
  write(o);
  return o.join('');
}

function pushHex(o: Parts, n: number | bigint): void {
  o.push('0x', n.toString(16));
}

/** A value, or `value/mask` as OVS prints masked register matches and loads. */
function pushValue(o: Parts, value: number, mask?: number): void {
  pushHex(o, value);
  if (mask !== undefined) {
    o.push('/');
    pushHex(o, mask);
  }
}

const MATCH_TEXT: { [K in MatchField['t']]: (o: Parts, m: Extract<MatchField, { t: K }>) => void } = {
  proto: (o, m) => o.push(m.word),
  'icmp-type': (o, m) => o.push('icmp_type=', String(m.type)),
  addr: (o, m) => o.push(m.field, '=', netText(m.net)),
  'tp-dst': (o, m) => o.push('tp_dst=', String(m.port)),
  reg: (o, m) => {
    o.push(m.reg, '=');
    pushValue(o, m.value, m.mask);
  },
  'reg-ip': (o, m) => o.push(m.reg, '=', ipv4Hex(m.ip)),
  'ct-state': (o, m) => {
    o.push('ct_state=');
    for (const f of m.flags) o.push(f.set ? '+' : '-', f.flag);
  },
  'ct-mark': (o, m) => {
    o.push('ct_mark=');
    pushValue(o, m.value, m.mask);
  },
};

function pushMatchField(o: Parts, m: MatchField): void {
  const print = MATCH_TEXT[m.t] as ((o: Parts, m: MatchField) => void) | undefined;
  if (!print) throw new InternalError(`no syntax for match field ${JSON.stringify(m)}`);
  print(o, m);
}

export function matchFieldText(m: MatchField): string {
  return joined((o) => pushMatchField(o, m));
}

function pushNat(o: Parts, n: Nat): void {
  if (n.t === 'nat') o.push('nat');
  else if (n.t === 'dnat') o.push('nat(dst=', hostPort(n.ip, n.port), ')');
  else o.push('nat(src=', ipText(n.ip), ')');
}

function pushCt(o: Parts, a: Extract<Action, { t: 'ct' }>): void {
  o.push(a.commit ? 'ct(commit,table=' : 'ct(table=', String(a.table), ',zone=', String(a.zone));
  if (a.nat) {
    o.push(',');
    pushNat(o, a.nat);
  }
  if (a.exec.length > 0) {
    o.push(',exec(');
    pushActions(o, a.exec);
    o.push(')');
  }
  o.push(')');
}

function pushLearn(o: Parts, l: Learn): void {
  o.push('learn(table=', String(l.table), ',hard_timeout=', String(l.hardTimeout), ',priority=', String(l.priority), ',delete_learned,cookie=');
  pushHex(o, l.cookie);
  o.push(',eth_type=');
  pushHex(o, l.ethType);
  o.push(',nw_proto=', String(l.ipProto));
  for (const c of l.copies) o.push(',', c);
  for (const d of l.loads) {
    o.push(',load:');
    if ('from' in d) o.push(d.from);
    else pushHex(o, d.value);
    o.push('->', d.to);
  }
  o.push(')');
}

const ACTION_TEXT: { [K in Action['t']]: (o: Parts, a: Extract<Action, { t: K }>) => void } = {
  output: (o, a) => o.push(a.port),
  drop: (o) => o.push('drop'),
  'goto-table': (o, a) => o.push('goto_table:', String(a.table)),
  resubmit: (o, a) => o.push('resubmit(,', String(a.table), ')'),
  group: (o, a) => o.push('group:', String(a.id)),
  'set-field': (o, a) => {
    o.push('set_field:');
    pushValue(o, a.value, a.mask);
    o.push('->', a.field);
  },
  'set-ip': (o, a) => o.push('set_field:', ipv4Hex(a.ip), '->', a.field),
  ct: pushCt,
  controller: (o, a) => o.push('controller(reason=', a.reason, ',userdata=', a.userdata, ')'),
  learn: (o, a) => pushLearn(o, a.learn),
};

function pushAction(o: Parts, a: Action): void {
  const print = ACTION_TEXT[a.t] as ((o: Parts, a: Action) => void) | undefined;
  if (!print) throw new InternalError(`no syntax for action ${JSON.stringify(a)}`);
  print(o, a);
}

function pushActions(o: Parts, actions: Action[]): void {
  for (let i = 0; i < actions.length; i++) {
    if (i > 0) o.push(',');
    pushAction(o, actions[i]);
  }
}

export function actionText(a: Action): string {
  return joined((o) => pushAction(o, a));
}

/** The match part, also the identity of a flow within its table and priority. */
export function matchText(f: Flow): string {
  const o: Parts = [];
  for (let i = 0; i < f.match.length; i++) {
    if (i > 0) o.push(',');
    pushMatchField(o, f.match[i]);
  }
  return o.join('');
}

export function actionsText(actions: Action[]): string {
  return joined((o) => pushActions(o, actions));
}

// A bundle has a few cookies and a quarter of a million flows: print each cookie once.
const cookieTexts = new Map<bigint, string>();
function cookieText(cookie: bigint): string {
  let t = cookieTexts.get(cookie);
  if (t === undefined) cookieTexts.set(cookie, (t = `flow add cookie=${hex(cookie)},table=`));
  return t;
}

/** The `flow add` line; `match` is matchText(f), for a caller that already has it. */
export function flowText(f: Flow, match: string = matchText(f)): string {
  checkFlow(f);
  const o: Parts = [cookieText(f.cookie), String(f.table), ',priority=', String(f.priority)];
  if (match !== '') o.push(',', match);
  o.push(' actions=');
  pushActions(o, f.actions);
  return o.join('');
}

function pushBucket(o: Parts, b: Bucket, id: number): void {
  o.push('bucket=bucket_id:', String(id), ',weight:100,actions=');
  pushActions(o, b.actions);
}

/** `group add` with the first share of buckets, then an `insert_bucket` line per further share. */
export function groupLines(g: Group): string[] {
  if (g.buckets.length === 0) throw new InternalError(`group ${g.id} has no bucket`);
  const lines: string[] = [];
  const size = bucketChunkSize(g.buckets.length);
  for (let start = 0; start < g.buckets.length; start += size) {
    const o: Parts =
      start === 0 ? ['group add group_id=', String(g.id), ',type=select'] : ['group insert_bucket group_id=', String(g.id), ',command_bucket_id=last'];
    const end = Math.min(start + size, g.buckets.length);
    for (let i = start; i < end; i++) {
      o.push(',');
      pushBucket(o, g.buckets[i], i);
    }
    lines.push(o.join(''));
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
