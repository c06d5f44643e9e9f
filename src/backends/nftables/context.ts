// What differs between the tables kproxc makes: the family word, the address type and the
// loopback exclusion of the ip and ip6 tables, and the forms of the kube-proxy release the
// table is made for. Everything else in the ruleset is written once for all of them.
import { parseCIDR, parseIP, type IPFamily } from '../../net/ip.js';
import { jump, payload, type Expr, type Family, type Stmt, type Value } from '../../nft/expr.js';
import type { DataType } from '../../nft/objects.js';
import { MARK_MASQ_CHAIN } from './names.js';
import type { TableForms } from './versions.js';

export interface FamilyContext {
  family: Family;
  addrType: DataType;
  saddr: Expr;
  daddr: Expr;
  /** Destination is not loopback: 127.0.0.0/8, or ::1. */
  notLocalhost: Value;
  masqueradeMark: number;
  /** The release's forms (versions.ts). */
  forms: TableForms;
  /** How a rule asks for its connection to be masqueraded: a jump to mark-for-masquerade, or the mark itself. */
  markForMasquerade: Stmt;
}

export function familyContext(ipFamily: IPFamily, masqueradeBit: number, forms: TableForms): FamilyContext {
  const v4 = ipFamily === 4;
  const proto = v4 ? 'ip' : 'ip6';
  return {
    family: proto,
    addrType: v4 ? 'ipv4_addr' : 'ipv6_addr',
    saddr: payload(proto, 'saddr'),
    daddr: payload(proto, 'daddr'),
    notLocalhost: v4 ? { t: 'prefix', cidr: parseCIDR('127.0.0.0/8')!.cidr } : { t: 'ip', ip: parseIP('::1')! },
    masqueradeMark: 2 ** masqueradeBit,
    forms,
    markForMasquerade: forms.markChain ? jump(MARK_MASQ_CHAIN) : { t: 'mark-set', op: 'or', value: 2 ** masqueradeBit },
  };
}
