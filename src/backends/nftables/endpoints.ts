// Per-endpoint chains (hairpin masquerade, affinity update, DNAT) and affinity sets.
import { eq, jump, meta, type Stmt } from '../../nft/expr.js';
import type { BaseTableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import { MARK_MASQ_CHAIN } from './names.js';
import type { ServicePortPlan } from './plan.js';

export function emitEndpoints(b: BaseTableBuilder, ctx: FamilyContext, plan: ServicePortPlan): void {
  const { sp } = plan;
  const proto = sp.id.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
  for (const ep of plan.endpoints.allReachableEndpoints) {
    const { chain, affinitySet } = plan.endpointNames(ep);
    b.chain({ name: chain });
    if (sp.affinityTimeout !== undefined) {
      // Affinity is per client IP and Service port, whichever Service IP was used.
      // "dynamic" is needed because the set is updated from the packet path; without it
      // some kernels add it later and a re-add then fails as a flags change.
      b.set({
        name: affinitySet,
        kind: 'set',
        keyType: [ctx.addrType],
        flags: ['dynamic', 'timeout'],
        timeoutSeconds: sp.affinityTimeout,
      });
    }
    // An endpoint reaching its own Service (hairpin) must be masqueraded, or its reply
    // would go straight back to itself and not through the DNAT.
    const stmts: Stmt[][] = [[eq(ctx.saddr, { t: 'ip', ip: ep.ip }), jump(MARK_MASQ_CHAIN)]];
    if (sp.affinityTimeout !== undefined) stmts.push([{ t: 'update', set: affinitySet, key: ctx.saddr }]);
    stmts.push([eq(meta('l4proto'), { t: 'sym', s: proto }), { t: 'dnat', ip: ep.ip, port: ep.port }]);
    for (const s of stmts) b.rule({ chain, stmts: s });
  }
}
