// OpenFlow flows and groups as values, and constructors that make them read close to the
// syntax they print as. The bundle syntax is syntax.ts's, the form `ovs-ofctl` dumps them in
// is dump-form.ts's, and the operations of a bundle are ops.ts's.
import { hostCIDR, type CIDR, type IP } from '../net/ip.js';

/** Protocol words: each implies its prerequisites (`tcp6` is IPv6 and TCP). */
export type ProtoWord = 'ip' | 'ipv6' | 'tcp' | 'udp' | 'sctp' | 'tcp6' | 'udp6' | 'sctp6' | 'icmp6';
export type AddrField = 'nw_src' | 'nw_dst' | 'ipv6_src' | 'ipv6_dst';
/** The registers the pipeline uses; xxreg3 is reg12..reg15 as one 128-bit field. */
export type RegField = 'reg0' | 'reg3' | 'reg4' | 'reg7' | 'xxreg3';
export type CtFlag = 'new' | 'est' | 'rel' | 'rpl' | 'inv' | 'trk' | 'snat' | 'dnat';

/**
 * One match field of a flow, as a value. Printed by syntax.ts and dump-form.ts; evaluated
 * by the OpenFlow tracer, which must know every kind.
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

/** One action, as a value. Printed by syntax.ts and dump-form.ts; executed by the OpenFlow tracer. */
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

// Constructors.

export const NORMAL: Action = { t: 'output', port: 'NORMAL' };
export const IN_PORT: Action = { t: 'output', port: 'IN_PORT' };
export const DROP: Action = { t: 'drop' };
export const groupAction = (id: number): Action => ({ t: 'group', id });
export const resubmit = (table: number): Action => ({ t: 'resubmit', table });
export const gotoTable = (table: number): Action => ({ t: 'goto-table', table });

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

export function setField(value: number, mask: number | undefined, field: RegField | 'ct_mark'): SetField {
  return mask === undefined ? { t: 'set-field', field, value } : { t: 'set-field', field, value, mask };
}

export function regMatch(reg: RegField, value: number, mask?: number): MatchField {
  return mask === undefined ? { t: 'reg', reg, value } : { t: 'reg', reg, value, mask };
}

/** ct_mark bits as a match and as a load inside ct(exec(...)). */
export const ctMarkMatch = (bits: number): MatchField => ({ t: 'ct-mark', value: bits, mask: bits });
export const setCtMark = (bits: number): SetField => setField(bits, bits, 'ct_mark');

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
