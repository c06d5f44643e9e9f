// Our flows and groups in the form `ovs-ofctl -O OpenFlow15 --no-stats dump-flows` and
// `dump-groups` print them (OVS 3.1), so that a live dump is compared with the compiled
// state as text. OVS normalises what it was given: numbers in hex without leading zeros
// and a bare 0 for zero, a 128-bit register match as its four 32-bit registers,
// conntrack flags in bit order, table 0 and the header fields as `cookie=C, table=T, `.
// test/backends/ovs/ovs-canonical.system.test.ts loads every golden bundle and checks these
// texts against what OVS prints, line for line.
import { InternalError } from '../diag/diagnostic.js';
import { formatIP, type IP } from '../net/ip.js';
import type { Action, Bucket, CtFlag, Flow, Group, Learn, MatchField, Nat, SetField } from './openflow.js';
import { netText } from './syntax.js';

/** A number as OVS prints it: `0`, or `0x` and lower-case hex digits without leading zeros. */
export function ovsHex(n: number | bigint): string {
  return n === 0 || n === 0n ? '0' : '0x' + n.toString(16);
}

function ipBig(ip: IP): bigint {
  let v = 0n;
  for (const b of ip.bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** An address loaded into a register (reg3, or xxreg3 for IPv6) as a set_field value prints. */
export function ipValueHex(ip: IP): string {
  if (ip.family === 4) return ovsHex(((ip.bytes[0] << 24) | (ip.bytes[1] << 16) | (ip.bytes[2] << 8) | ip.bytes[3]) >>> 0);
  return ovsHex(ipBig(ip));
}

function value(v: number, mask?: number): string {
  return mask === undefined ? ovsHex(v) : `${ovsHex(v)}/${ovsHex(mask)}`;
}

/** OVS prints conntrack flags in the order of their bits. */
const CT_BIT_ORDER: CtFlag[] = ['new', 'est', 'rel', 'rpl', 'inv', 'trk', 'snat', 'dnat'];

/** xxreg3 is reg12..reg15: a match on it prints as the four registers, high word first. */
function xxregWords(ip: IP): string {
  const out: string[] = [];
  for (let w = 0; w < 4; w++) {
    const b = ip.bytes;
    const word = ((b[w * 4] << 24) | (b[w * 4 + 1] << 16) | (b[w * 4 + 2] << 8) | b[w * 4 + 3]) >>> 0;
    out.push(`reg${12 + w}=${ovsHex(word)}`);
  }
  return out.join(',');
}

function matchField(m: MatchField): string {
  switch (m.t) {
    case 'proto':
      return m.word;
    case 'icmp-type':
      return `icmp_type=${m.type}`;
    case 'addr':
      return `${m.field}=${netText(m.net)}`;
    case 'tp-dst':
      return `tp_dst=${m.port}`;
    case 'reg':
      return `${m.reg}=${value(m.value, m.mask)}`;
    case 'reg-ip':
      if (m.reg === 'xxreg3') return xxregWords(m.ip);
      return `${m.reg}=${ipValueHex(m.ip)}`;
    case 'ct-state': {
      const flags = [...m.flags].sort((a, b) => CT_BIT_ORDER.indexOf(a.flag) - CT_BIT_ORDER.indexOf(b.flag));
      return 'ct_state=' + flags.map((f) => (f.set ? '+' : '-') + f.flag).join('');
    }
    case 'ct-mark':
      return `ct_mark=${value(m.value, m.mask)}`;
  }
  throw new InternalError(`no dump form for match field ${JSON.stringify(m)}`);
}

export function canonicalMatch(f: Flow): string {
  return f.match.map(matchField).join(',');
}

function setField(a: SetField): string {
  return `set_field:${value(a.value, a.mask)}->${a.field}`;
}

function nat(n: Nat): string {
  if (n.t === 'nat') return 'nat';
  if (n.t === 'snat') return `nat(src=${formatIP(n.ip)})`;
  return n.ip.family === 6 ? `nat(dst=[${formatIP(n.ip)}]:${n.port})` : `nat(dst=${formatIP(n.ip)}:${n.port})`;
}

function learn(l: Learn): string {
  const parts = [`table=${l.table}`, `hard_timeout=${l.hardTimeout}`, `priority=${l.priority}`, 'delete_learned', `cookie=${ovsHex(l.cookie)}`];
  parts.push(`eth_type=${ovsHex(l.ethType)}`, `nw_proto=${l.ipProto}`, ...l.copies);
  for (const d of l.loads) parts.push('from' in d ? `load:${d.from}->${d.to}` : `load:${ovsHex(d.value)}->${d.to}`);
  return `learn(${parts.join(',')})`;
}

function action(a: Action): string {
  switch (a.t) {
    case 'output':
      return a.port;
    case 'drop':
      return 'drop';
    case 'goto-table':
      return `goto_table:${a.table}`;
    case 'resubmit':
      return `resubmit(,${a.table})`;
    case 'group':
      return `group:${a.id}`;
    case 'set-field':
      return setField(a);
    case 'set-ip':
      return `set_field:${ipValueHex(a.ip)}->${a.field}`;
    case 'ct': {
      const parts = [...(a.commit ? ['commit'] : []), `table=${a.table}`, `zone=${a.zone}`, ...(a.nat ? [nat(a.nat)] : [])];
      if (a.exec.length > 0) parts.push(`exec(${a.exec.map(setField).join(',')})`);
      return `ct(${parts.join(',')})`;
    }
    case 'controller':
      return `controller(reason=${a.reason},userdata=${a.userdata})`;
    case 'learn':
      return learn(a.learn);
  }
  throw new InternalError(`no dump form for action ${JSON.stringify(a)}`);
}

export function canonicalActions(actions: Action[]): string {
  return actions.map(action).join(',');
}

/** What identifies a flow in its table: `priority=P` and the match, as the dump prints them. */
export function canonicalFlowKey(f: Flow, match: string = canonicalMatch(f)): string {
  return match === '' ? `priority=${f.priority}` : `priority=${f.priority},${match}`;
}

/** The whole dump-flows line (without its leading space). */
export function canonicalFlowLine(f: Flow): string {
  const table = f.table === 0 ? '' : `table=${f.table}, `;
  const cookie = f.cookie === 0n ? '' : `cookie=${ovsHex(f.cookie)}, `;
  return `${cookie}${table}${canonicalFlowKey(f)} actions=${canonicalActions(f.actions)}`;
}

export function canonicalBucket(b: Bucket, id: number): string {
  return `bucket=bucket_id:${id},weight:100,actions=${canonicalActions(b.actions)}`;
}

/** The whole dump-groups line (without its leading space). */
export function canonicalGroupLine(g: Group): string {
  return `group_id=${g.id},type=select,${g.buckets.map(canonicalBucket).join(',')}`;
}

const cookieTexts = new Map<bigint, string>();

/** A cookie as the dump prints it; a bundle has few cookies, each printed once. */
export function cookieHex(c: bigint): string {
  let t = cookieTexts.get(c);
  if (t === undefined) cookieTexts.set(c, (t = ovsHex(c)));
  return t;
}
