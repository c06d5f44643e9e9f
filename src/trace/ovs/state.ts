// The packet as the flows see it while it crosses the bridge, and what has happened to it:
// one copy per branch (a select group forks the walk, one branch per bucket).
import { ipFromBytes, type IP } from '../../net/ip.js';
import type { CtFlag, Nat, RegField } from '../../ovs/openflow.js';
import type { L4Protocol } from '../packet.js';
import type { Step } from '../result.js';

/** The connection-tracking fields of a packet that came back from `ct(table=...)`. */
export interface CtView {
  flags: Set<CtFlag>;
  mark: number;
  zone: number;
}

/** One instance of the packet: `ct(table=N)` makes a second one that resumes at table N. */
export interface Fields {
  protocol: L4Protocol;
  src: IP;
  dst: IP;
  sport: number;
  dport: number;
  /** reg0..reg15, 32 bits each; xxreg3 is reg12..reg15. */
  regs: bigint[];
  /** Undefined while the packet is untracked (no ct action has run for this instance). */
  ct?: CtView;
}

/** What conntrack holds for the traced connection in one zone once a ct(commit) ran. */
export interface Conn {
  mark: number;
  nat?: Nat;
}

export type Output = 'NORMAL' | 'IN_PORT' | 'reject';

export interface OvsState {
  pkt: Fields;
  /** The connection per zone: shared by every instance of the packet in this branch. */
  conns: Map<number, Conn>;
  outputs: Output[];
  dnat?: { ip: IP; port: number };
  snat?: IP;
  /** Instances waiting to resume after this pass, in the order their ct actions ran. */
  pending: { table: number; zone: number; pkt: Fields; what: string }[];
  /** Tables entered by resubmit or group and not yet returned from, with the state they saw. */
  stack: string[];
  /** Why OVS would have stopped processing this branch early (a loop). */
  aborted?: string;
  path: Step[];
}

export function copyFields(f: Fields): Fields {
  return { ...f, regs: [...f.regs], ...(f.ct ? { ct: { ...f.ct, flags: new Set(f.ct.flags) } } : {}) };
}

/** A branch's own copy: later steps and effects of one branch never show in another. */
export function forkState(s: OvsState): OvsState {
  return {
    ...s,
    pkt: copyFields(s.pkt),
    conns: new Map([...s.conns].map(([z, c]) => [z, { ...c }])),
    outputs: [...s.outputs],
    pending: [...s.pending],
    stack: [...s.stack],
    path: [...s.path],
  };
}

export function record(s: OvsState, step: Step): void {
  s.path.push(step);
}

/** Where each register lives in reg0..reg15: first word and number of 32-bit words. */
const REG_SPAN: Record<RegField, [first: number, words: number]> = {
  reg0: [0, 1],
  reg3: [3, 1],
  reg4: [4, 1],
  reg7: [7, 1],
  xxreg3: [12, 4],
};

export function regWidth(r: RegField): number {
  return REG_SPAN[r][1] * 32;
}

export function readReg(f: Fields, r: RegField): bigint {
  const [first, words] = REG_SPAN[r];
  let v = 0n;
  for (let i = 0; i < words; i++) v = (v << 32n) | f.regs[first + i];
  return v;
}

/** Sets the bits of mask (all bits when undefined) to value, as set_field does. */
export function writeReg(f: Fields, r: RegField, value: bigint, mask?: bigint): void {
  const [first, words] = REG_SPAN[r];
  const all = (1n << BigInt(words * 32)) - 1n;
  const m = mask ?? all;
  const v = (readReg(f, r) & ~m & all) | (value & m);
  for (let i = 0; i < words; i++) f.regs[first + i] = (v >> BigInt((words - 1 - i) * 32)) & 0xffffffffn;
}

/** An address as the number a register holds (network byte order). */
export function ipValue(ip: IP): bigint {
  let v = 0n;
  for (const b of ip.bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** The number a register holds as an address of the packet's family. */
export function ipOf(value: bigint, family: 4 | 6): IP {
  const n = family === 4 ? 4 : 16;
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = Number((value >> BigInt((n - 1 - i) * 8)) & 0xffn);
  return ipFromBytes(family, bytes);
}
