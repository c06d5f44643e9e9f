// Conntrack for the traced packet, which opens a new connection. Each zone holds at most
// the traced connection: a lookup finds it new (+new+trk) with the mark it was committed
// with in that zone (0 before any commit); ct(commit) records the mark its exec sets and
// the NAT it sets up; nat(dst=...) and nat(src=...) rewrite the packet only when committed;
// a bare nat replays the NAT the zone's connection already has.
import { InternalError } from '../../diag/diagnostic.js';
import type { Action, CtFlag, Nat } from '../../ovs/openflow.js';
import { copyFields, type Fields, type OvsState } from './state.js';

export type CtAction = Extract<Action, { t: 'ct' }>;

/** Checks what the model covers: exec only sets ct_mark, and only on commit. */
export function checkCt(a: CtAction): void {
  if (a.exec.length > 0 && !a.commit) throw new InternalError('ct(exec(...)) without commit: OVS rejects it');
  for (const e of a.exec) {
    if (e.field !== 'ct_mark') throw new InternalError(`ct(exec(set_field ...->${e.field})): the tracer models ct_mark only`);
  }
}

function applyNat(s: OvsState, pkt: Fields, nat: Nat, flags: Set<CtFlag>): void {
  if (nat.t === 'dnat') {
    pkt.dst = nat.ip;
    pkt.dport = nat.port;
    s.dnat = { ip: nat.ip, port: nat.port };
  } else if (nat.t === 'snat') {
    pkt.src = nat.ip;
    s.snat = nat.ip;
  }
  // The ct_state flags OVS sets on a packet conntrack has translated.
  if (nat.t !== 'nat') flags.add(nat.t);
}

/**
 * Runs one ct action: returns the instance that resumes at a.table (with the ct fields
 * set and any NAT applied) and what happened, in words. The caller's instance goes on
 * untracked, as OVS's does.
 */
export function runCt(s: OvsState, a: CtAction): { resumed: Fields; what: string } {
  const had = s.conns.get(a.zone);
  const flags = new Set<CtFlag>(['trk', 'new']);
  let mark = had?.mark ?? 0;
  const resumed = copyFields(s.pkt);
  const notes: string[] = [had ? 'the connection (committed earlier) is still new' : 'a new connection'];
  // nat(dst/src=...) takes effect only when committed; bare nat replays the zone's NAT.
  const nat: Nat | undefined = a.nat?.t === 'nat' ? had?.nat : a.commit ? a.nat : undefined;
  if (a.commit) {
    for (const e of a.exec) mark = (mark & ~(e.mask ?? 0xffffffff)) | (e.value & (e.mask ?? 0xffffffff));
    s.conns.set(a.zone, { mark, ...(nat ? { nat } : had?.nat ? { nat: had.nat } : {}) });
    notes.push(`committed${a.exec.length ? ` with ct_mark 0x${(mark >>> 0).toString(16)}` : ''}`);
  }
  if (nat) {
    applyNat(s, resumed, nat, flags);
    notes.push(nat.t === 'dnat' ? 'destination translated' : nat.t === 'snat' ? 'source translated' : 'the connection\'s NAT replayed');
  } else if (a.nat?.t === 'nat') {
    notes.push('no NAT to replay');
  }
  resumed.ct = { flags, mark, zone: a.zone };
  s.pkt.ct = undefined;
  return { resumed, what: notes.join(', ') };
}
