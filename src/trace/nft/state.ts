// The packet as the rules see it while it moves through the hooks, one copy per branch.
import { isLoopback, ipEquals, type IP } from '../../net/ip.js';
import type { L4Protocol } from '../packet.js';
import type { Hook, Step } from '../result.js';

/** What the walk knows of the node: the addresses `fib ... type local` and routing call local. */
export interface NodeEnv {
  localAddresses: IP[];
}

export function isLocalAddress(env: NodeEnv, ip: IP): boolean {
  return isLoopback(ip) || env.localAddresses.some((a) => ipEquals(a, ip));
}

export interface PacketState {
  protocol: L4Protocol;
  saddr: IP;
  daddr: IP;
  sport: number;
  dport: number;
  /** meta iifname: the arriving interface, "" for a packet the node sends, "lo" after loopback. */
  iif: string;
  mark: number;
  hook: Hook;
  /** The destination the connection was opened to, before any NAT (`ct original ip daddr`, `ct original proto-dst`). */
  original: { daddr: IP; dport: number };
  /**
   * The connection's confirmed bit (`ct status confirmed`): set once its first packet has
   * left the hooks (postrouting, out or back in through loopback).
   */
  confirmed?: boolean;
  /** The destination after DNAT, when a DNAT statement ran. */
  dnat?: { ip: IP; port: number };
  /**
   * The connection's DNAT status bit (`ct status dnat`): set by a DNAT that changed the
   * destination address or port, as the kernel sets it (nf_nat_setup_info).
   */
  ctStatusDnat?: boolean;
  masqueraded: boolean;
  /** Keys added by `update @set` on this path, per set. */
  added: Map<string, Set<string>>;
  /** What the dynamic sets held before the packet (a client's earlier connection); empty after a load. */
  before?: Map<string, Set<string>>;
  path: Step[];
}

/** A branch's own copy: later steps and effects of one branch never show in another. */
export function forkState(s: PacketState): PacketState {
  return {
    ...s,
    added: new Map([...s.added].map(([k, v]) => [k, new Set(v)])),
    path: [...s.path],
  };
}

export function record(s: PacketState, step: Omit<Step, 'hook'>): void {
  s.path.push({ hook: s.hook, ...step });
}
