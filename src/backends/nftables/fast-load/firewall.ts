// loadBalancerSourceRanges without an anonymous set: one `return` rule per allowed
// source, then `drop`. The chain is entered by `goto` from firewall-check's verdict map,
// so `return` resumes the base chain exactly where falling off kube-proxy's
// `ip saddr != { ... } drop` does.
import { eq, verdict } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import type { ServicePortPlan } from '../plan.js';

export function emitRuleFirewall(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan): void {
  if (!plan.usesFirewall) return;
  const chain = plan.chains.firewall;
  b.chain({ name: chain });
  for (const s of plan.firewallSources) {
    const source = s.t === 'cidr' ? ({ t: 'prefix', cidr: s.cidr } as const) : ({ t: 'ip', ip: s.ip } as const);
    b.rule({ chain, stmts: [eq(ctx.saddr, source), verdict({ kind: 'return' })] });
  }
  b.rule({ chain, stmts: [verdict({ kind: 'drop' })] });
}
