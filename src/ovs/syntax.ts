// Match fields and actions in the syntax of `ovs-ofctl bundle` files (OVS 3.1); ops.ts
// builds the lines of a bundle from them. Every field is printed from a parsed value (an IP,
// a CIDR, a number), never from input text, so no input can inject OpenFlow syntax.
import { InternalError } from '../diag/diagnostic.js';
import { addressBits, formatCIDR, formatIP, ipv4Hex, type CIDR, type IP } from '../net/ip.js';
import type { Action, Flow, Learn, MatchField, Nat } from './openflow.js';

export function hex(n: number | bigint): string {
  return '0x' + n.toString(16);
}

function ipText(ip: IP): string {
  return formatIP(ip);
}

/** An address or a network; a full-length prefix prints as a plain address. */
export function netText(c: CIDR): string {
  return c.prefix === addressBits(c.addr.family) ? formatIP(c.addr) : formatCIDR(c);
}

/** `IP:PORT`, IPv6 in brackets, as nat() wants it. */
function hostPort(ip: IP, port: number): string {
  return ip.family === 6 ? `[${formatIP(ip)}]:${port}` : `${formatIP(ip)}:${port}`;
}

// Printing: each text is made of pieces pushed onto one list and joined once, which gives
// one flat string. Texts built by `+` or template literals are trees of pieces, which the
// bundle's map and its sort must first copy into one; at 10,000 Services that is some
// 140,000 flow lines, and the many small arrays of building each part on its own were
// most of the backend's garbage.
export type Parts = string[];

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

/** The match part, also the identity of a flow within its table and priority. */
export function matchText(f: Flow): string {
  const o: Parts = [];
  for (let i = 0; i < f.match.length; i++) {
    if (i > 0) o.push(',');
    pushMatchField(o, f.match[i]);
  }
  return o.join('');
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

export function pushActions(o: Parts, actions: Action[]): void {
  for (let i = 0; i < actions.length; i++) {
    if (i > 0) o.push(',');
    pushAction(o, actions[i]);
  }
}

export function actionsText(actions: Action[]): string {
  return joined((o) => pushActions(o, actions));
}
