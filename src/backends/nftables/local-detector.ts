// kube-proxy's LocalTrafficDetector: matches for traffic from (or not from) local Pods.
// Interface detectors use `iifname` (a name match), which loads whether or not the
// interface exists; `iif` would need the interface at load time.
import type { LocalDetector } from '../../model/types.js';
import { meta, type Stmt } from '../../nft/expr.js';
import type { FamilyContext } from './context.js';

export function localMatch(ctx: FamilyContext, d: LocalDetector, local: boolean): Stmt | null {
  const op = local ? '==' : '!=';
  switch (d.mode) {
    case 'none':
      return null;
    case 'cidr':
      return { t: 'match', left: ctx.saddr, op, right: { t: 'prefix', cidr: d.cidr } };
    case 'bridge':
      return { t: 'match', left: meta('iifname'), op, right: { t: 'str', s: d.interfaceName } };
    case 'prefix':
      return { t: 'match', left: meta('iifname'), op, right: { t: 'str', s: `${d.interfacePrefix}*` } };
  }
}
