// Typed rule bodies. A rule is a list of statements built from these values; it is printed
// to nft text (kube-proxy's spelling) by text.ts and to libnftables JSON (nft's canonical
// listing form, so that `diff` can compare with `nft -j list ruleset`) by json.ts.
import type { CIDR, IP } from '../net/ip.js';

export type Family = 'ip' | 'ip6';

export type Verdict =
  | { kind: 'jump' | 'goto'; target: string }
  | { kind: 'drop' | 'accept' | 'return' };

/** Left-hand expressions: what a match or a map lookup reads from the packet. */
export type Expr =
  | { t: 'payload'; proto: 'ip' | 'ip6' | 'th' | 'tcp' | 'udp' | 'sctp'; field: 'saddr' | 'daddr' | 'dport' }
  | { t: 'meta'; key: 'l4proto' | 'mark' | 'iifname' }
  /**
   * `ct state` (compared with `new`), `ct status` (a flag of it: `dnat`, the connection's
   * destination was translated; `confirmed`, a packet of it has left the node's hooks
   * before), `ct direction` (with `original`: a packet from the side that opened it).
   * `ct state` and `ct status` are bitmasks: `==` tests that the flag is set, `!=` that it
   * is clear (nft: `ct status dnat`, `ct status ! confirmed`).
   */
  | { t: 'ct'; key: 'state' | 'status' | 'direction' }
  /** `ct original ip daddr`, `ct original proto-dst`: the connection's destination as it was opened, before any NAT. */
  | { t: 'ct-original'; key: 'ip daddr' | 'ip6 daddr' | 'proto-dst' }
  /**
   * `jhash KEY mod M seed S`: the kernel's jhash of the key's bytes, scaled to 0..M-1
   * (fast-load's affinity records: jhash.ts computes it for an endpoint).
   */
  | { t: 'jhash'; key: Expr; mod: number; seed: number }
  | { t: 'fib'; flag: 'saddr' | 'daddr'; result: 'type' }
  | { t: 'concat'; parts: Expr[] }
  | { t: 'and'; left: Expr; mask: number }
  /** `numgen random mod K [offset C]`; with mod 1 it is the constant C (a key part no lookup can otherwise hold). */
  | { t: 'numgen'; mod: number; offset?: number };

/** Right-hand values of a match. */
export type Value =
  | { t: 'ip'; ip: IP }
  | { t: 'prefix'; cidr: CIDR }
  | { t: 'num'; n: number }
  | { t: 'sym'; s: 'new' | 'dnat' | 'confirmed' | 'original' | 'local' | 'tcp' | 'udp' | 'sctp' }
  | { t: 'str'; s: string } // quoted: interface names (with a trailing * wildcard)
  | { t: 'setref'; name: string }
  | { t: 'anonset'; items: Value[] };

export type Stmt =
  | { t: 'match'; left: Expr; op: '==' | '!='; right: Value }
  | { t: 'vmap'; key: Expr; map: string }
  | { t: 'numgen-vmap'; mod: number; targets: Verdict[] }
  | { t: 'verdict'; v: Verdict }
  | { t: 'mark-set'; op: 'or' | 'xor'; value: number }
  | { t: 'masquerade'; fullyRandom: boolean }
  | { t: 'dnat'; ip: IP; port: number }
  /**
   * `dnat ip addr . port to numgen random mod N map { 0 : A . P , ... }`: destination NAT to
   * one of N endpoints drawn at random, without a chain per endpoint. The family is the
   * addresses' (every target has the same one).
   */
  | { t: 'numgen-dnat'; mod: number; targets: { ip: IP; port: number }[] }
  /**
   * `dnat ip addr . port to KEY map @M`: destination NAT to the address and port a named
   * data map holds for KEY (fast-load: a constant per policy chain and a numgen draw).
   */
  | { t: 'map-dnat'; family: Family; key: Expr; map: string }
  /**
   * `dnat to KEY map @M:P`: destination NAT to the address a named map holds for KEY, and
   * the port P (fast-load: a policy chain whose endpoints share one port, so that its map
   * holds an address per element, not an address and a port).
   */
  | { t: 'map-addr-dnat'; key: Expr; map: string; port: number }
  | { t: 'update'; set: string; key: Expr; timeoutSeconds?: number }
  | { t: 'reject' };

/** What a `ct` key is compared with in kproxc's rules: `ct state new`, `ct status dnat`, `ct status ! confirmed`, `ct direction original`. */
export function ctValue(key: Extract<Expr, { t: 'ct' }>['key'], word: unknown): 'new' | 'dnat' | 'confirmed' | 'original' | null {
  switch (key) {
    case 'state':
      return word === 'new' ? word : null;
    case 'status':
      return word === 'dnat' || word === 'confirmed' ? word : null;
    case 'direction':
      return word === 'original' ? word : null;
  }
}

// Small constructors, so that backends read like the rules they make.
export const payload = (proto: 'ip' | 'ip6' | 'th' | 'tcp' | 'udp' | 'sctp', field: 'saddr' | 'daddr' | 'dport'): Expr => ({
  t: 'payload',
  proto,
  field,
});
export const meta = (key: 'l4proto' | 'mark' | 'iifname'): Expr => ({ t: 'meta', key });
export const concat = (...parts: Expr[]): Expr => ({ t: 'concat', parts });
export const eq = (left: Expr, right: Value): Stmt => ({ t: 'match', left, op: '==', right });
export const ne = (left: Expr, right: Value): Stmt => ({ t: 'match', left, op: '!=', right });
export const ipv = (ip: IP): Value => ({ t: 'ip', ip });
export const prefix = (cidr: CIDR): Value => ({ t: 'prefix', cidr });
export const num = (n: number): Value => ({ t: 'num', n });
export const setref = (name: string): Value => ({ t: 'setref', name });
export const jump = (target: string): Stmt => ({ t: 'verdict', v: { kind: 'jump', target } });
export const goto = (target: string): Stmt => ({ t: 'verdict', v: { kind: 'goto', target } });
export const verdict = (v: Verdict): Stmt => ({ t: 'verdict', v });
export const ctStateNew: Stmt = { t: 'match', left: { t: 'ct', key: 'state' }, op: '==', right: { t: 'sym', s: 'new' } };
export const ctStatusDnat: Stmt = { t: 'match', left: { t: 'ct', key: 'status' }, op: '==', right: { t: 'sym', s: 'dnat' } };
