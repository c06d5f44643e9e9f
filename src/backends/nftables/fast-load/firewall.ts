// loadBalancerSourceRanges without an anonymous set: one `return` rule per allowed
// source, then `drop`. The chain is entered by `goto` from firewall-check's verdict map,
// so `return` resumes the base chain exactly where falling off kube-proxy's
// `ip saddr != { ... } drop` does.
//
// Its rules depend on the allowed sources alone, and Services behind one load balancer
// or one office network often allow the same: in text, Service ports with the same
// sources, in the same order, share one chain, `firewall-sources-HASH`, HASH standing for
// the sources (the JSON form keeps kube-proxy's chain per port). A chain costs nft about
// four times an element to load (docs/fast-load.md).
import { InternalError } from '../../../diag/diagnostic.js';
import { eq, verdict } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import { formatCIDR, formatIP } from '../../../net/ip.js';
import type { FamilyContext } from '../context.js';
import { hashPrefix } from '../names.js';
import type { ServicePortPlan } from '../plan.js';
import { perTable } from './per-table.js';

function emitRules(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string): void {
  b.chain({ name: chain });
  for (const s of plan.firewallSources) {
    const source = s.t === 'cidr' ? ({ t: 'prefix', cidr: s.cidr } as const) : ({ t: 'ip', ip: s.ip } as const);
    b.rule({ chain, stmts: [eq(ctx.saddr, source), verdict({ kind: 'return' })] });
  }
  b.rule({ chain, stmts: [verdict({ kind: 'drop' })] });
}

/** The port's own firewall chain, kube-proxy's name (the JSON form). */
export function emitRuleFirewall(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan): string | undefined {
  if (!plan.usesFirewall) return undefined;
  emitRules(b, ctx, plan, plan.chains.firewall);
  return plan.chains.firewall;
}

/** The sources each shared firewall chain of a table checks, by name: a hash's clash would send a port to another's chain. */
const sharedFirewalls = perTable(() => new Map<string, string>());

/** The firewall chain of the port's allowed sources, made with the first port that allows them (text). */
export function emitSharedRuleFirewall(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan): string | undefined {
  if (!plan.usesFirewall) return undefined;
  const sources = plan.firewallSources.map((s) => (s.t === 'cidr' ? formatCIDR(s.cidr) : formatIP(s.ip))).join(',');
  const chain = `firewall-sources-${hashPrefix(sources)}`;
  const made = sharedFirewalls(b);
  const before = made.get(chain);
  if (before === undefined) {
    made.set(chain, sources);
    emitRules(b, ctx, plan, chain);
  } else if (before !== sources) {
    throw new InternalError(`firewall chains of sources ${before} and ${sources} have one name, ${chain}`);
  }
  return chain;
}
