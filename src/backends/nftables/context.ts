// What differs between the ip and ip6 tables: the family word, the address type and the
// loopback exclusion. Everything else in the ruleset is written once for both.
import { parseCIDR, parseIP, type IPFamily } from '../../net/ip.js';
import { payload, type Expr, type Family, type Value } from '../../nft/expr.js';
import type { DataType } from '../../nft/objects.js';

export interface FamilyContext {
  family: Family;
  addrType: DataType;
  saddr: Expr;
  daddr: Expr;
  /** Destination is not loopback: 127.0.0.0/8, or ::1. */
  notLocalhost: Value;
  masqueradeMark: number;
}

export function familyContext(ipFamily: IPFamily, masqueradeBit: number): FamilyContext {
  const v4 = ipFamily === 4;
  const proto = v4 ? 'ip' : 'ip6';
  return {
    family: proto,
    addrType: v4 ? 'ipv4_addr' : 'ipv6_addr',
    saddr: payload(proto, 'saddr'),
    daddr: payload(proto, 'daddr'),
    notLocalhost: v4 ? { t: 'prefix', cidr: parseCIDR('127.0.0.0/8')!.cidr } : { t: 'ip', ip: parseIP('::1')! },
    masqueradeMark: 2 ** masqueradeBit,
  };
}
