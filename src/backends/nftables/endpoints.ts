// Per-endpoint chains (hairpin masquerade, affinity update, DNAT) and affinity sets.
import { eq, jump, meta } from '../../nft/expr.js';
import type { BaseTableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import { MARK_MASQ_CHAIN } from './names.js';
import type { ServicePortPlan } from './plan.js';

// Statements every endpoint chain has, made once.
const markForMasquerade = jump(MARK_MASQ_CHAIN);
const l4protoIs = {
  tcp: eq(meta('l4proto'), { t: 'sym', s: 'tcp' }),
  udp: eq(meta('l4proto'), { t: 'sym', s: 'udp' }),
  sctp: eq(meta('l4proto'), { t: 'sym', s: 'sctp' }),
};

export function emitEndpoints(b: BaseTableBuilder, ctx: FamilyContext, plan: ServicePortPlan): void {
  const { sp } = plan;
  const protocolMatch = l4protoIs[sp.id.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp'];
  const endpoints = plan.endpoints.allReachableEndpoints;
  const names = plan.endpointNames(endpoints);
  for (let i = 0; i < endpoints.length; i++) {
    const ep = endpoints[i];
    const { chain, affinitySet } = names[i];
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
    b.rule({ chain, stmts: [eq(ctx.saddr, { t: 'ip', ip: ep.ip }), markForMasquerade] });
    if (sp.affinityTimeout !== undefined) b.rule({ chain, stmts: [{ t: 'update', set: affinitySet, key: ctx.saddr }] });
    b.rule({ chain, stmts: [protocolMatch, { t: 'dnat', ip: ep.ip, port: ep.port }] });
  }
}
