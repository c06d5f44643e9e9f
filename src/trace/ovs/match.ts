// Match fields as OVS evaluates them on the traced packet. Every kind of MatchField has an
// evaluator here (a new kind fails the build until it has one); a kind unknown at run time
// throws when the flows are indexed, before any packet is walked.
import { InternalError } from '../../diag/diagnostic.js';
import { addressBits, cidrContains } from '../../net/ip.js';
import type { MatchField, ProtoWord } from '../../ovs/openflow.js';
import { ipValue, readReg, regWidth, type Fields } from './state.js';

export type MatchFn = (f: Fields) => boolean;

/** What a protocol word requires: the IP family and, for the L4 words, the protocol. */
const PROTO_WORDS: Record<ProtoWord, { family: 4 | 6; l4?: string }> = {
  ip: { family: 4 },
  ipv6: { family: 6 },
  tcp: { family: 4, l4: 'tcp' },
  udp: { family: 4, l4: 'udp' },
  sctp: { family: 4, l4: 'sctp' },
  tcp6: { family: 6, l4: 'tcp' },
  udp6: { family: 6, l4: 'udp' },
  sctp6: { family: 6, l4: 'sctp' },
  // The traced packet is TCP, UDP or SCTP: never ICMPv6.
  icmp6: { family: 6, l4: 'icmp6' },
};

const ADDR_FAMILY = { nw_src: 4, nw_dst: 4, ipv6_src: 6, ipv6_dst: 6 } as const;

type Compilers = { [K in MatchField['t']]: (m: Extract<MatchField, { t: K }>) => MatchFn };

const COMPILERS: Compilers = {
  proto: (m) => {
    const w = PROTO_WORDS[m.word];
    if (!w) throw new InternalError(`the tracer does not know the protocol word ${m.word}`);
    return (f) => f.src.family === w.family && (w.l4 === undefined || f.protocol === w.l4);
  },
  // ICMP types need an ICMP packet.
  'icmp-type': () => () => false,
  addr: (m) => {
    const family = ADDR_FAMILY[m.field];
    if (!family || m.net.addr.family !== family) throw new InternalError(`address match ${m.field} on an IPv${m.net.addr.family} network`);
    const src = m.field === 'nw_src' || m.field === 'ipv6_src';
    return (f) => f.src.family === family && cidrContains(m.net, src ? f.src : f.dst);
  },
  'tp-dst': (m) => (f) => f.dport === m.port,
  reg: (m) => {
    const width = regWidth(m.reg);
    const mask = m.mask === undefined ? (1n << BigInt(width)) - 1n : BigInt(m.mask);
    const value = BigInt(m.value);
    if ((value & ~mask) !== 0n) throw new InternalError(`${m.reg} match value 0x${value.toString(16)} has bits outside its mask`);
    return (f) => (readReg(f, m.reg) & mask) === value;
  },
  'reg-ip': (m) => {
    if (addressBits(m.ip.family) > regWidth(m.reg)) throw new InternalError(`an IPv${m.ip.family} address does not fit ${m.reg}`);
    const value = ipValue(m.ip);
    return (f) => readReg(f, m.reg) === value;
  },
  // An untracked packet has every flag clear, trk included.
  'ct-state': (m) => (f) => m.flags.every(({ flag, set }) => (f.ct?.flags.has(flag) ?? false) === set),
  'ct-mark': (m) => (f) => ((f.ct?.mark ?? 0) & m.mask) === m.value,
};

export const TRACED_MATCH_KINDS = new Set(Object.keys(COMPILERS));

export function compileMatch(m: MatchField): MatchFn {
  const c = COMPILERS[m.t] as ((m: MatchField) => MatchFn) | undefined;
  if (!c) throw new InternalError(`the tracer cannot evaluate the match field ${JSON.stringify(m)}`);
  return c(m);
}
