// loadBalancerSourceRanges: the per-Service-port firewall chain drops sources outside them.
import type { Value } from '../../nft/expr.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import type { ServicePortPlan } from './plan.js';

export function emitFirewall(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan): string | undefined {
  if (!plan.usesFirewall) return undefined;
  b.chain({ name: plan.chains.firewall });
  const items: Value[] = plan.firewallSources.map((s) => (s.t === 'cidr' ? { t: 'prefix', cidr: s.cidr } : { t: 'ip', ip: s.ip }));
  b.rule({
    chain: plan.chains.firewall,
    stmts: [{ t: 'match', left: ctx.saddr, op: '!=', right: { t: 'anonset', items } }, { t: 'verdict', v: { kind: 'drop' } }],
  });
  return plan.chains.firewall;
}
