// Per-endpoint chains: hairpin masquerade, affinity update (affinity.ts), DNAT; and from
// 1.36 the hairpin set's elements, and endpoint chains only where affinity needs them
// (fast-load's are one rule each: the update, then the DNAT).
import { InternalError } from '../../diag/diagnostic.js';
import { eq, jump, meta, payload } from '../../nft/expr.js';
import { AddressPortRule } from '../../nft/rule-template.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import type { KeyPart } from '../../nft/objects.js';
import { endpointChainAffinity, type AffinityForm } from './affinity.js';
import type { FamilyContext } from './context.js';
import { HAIRPIN_SET, MARK_MASQ_CHAIN } from './names.js';
import type { ServicePortPlan } from './plan.js';
import { usesEndpointChains } from './versions.js';

// The rules every endpoint chain has, but for the endpoint's address and port.
const markForMasquerade = jump(MARK_MASQ_CHAIN);
// An endpoint reaching its own Service (hairpin) must be masqueraded, or its reply would
// go straight back to itself and not through the DNAT.
const hairpin = {
  ip: new AddressPortRule((ip) => [eq(payload('ip', 'saddr'), { t: 'ip', ip }), markForMasquerade]),
  ip6: new AddressPortRule((ip) => [eq(payload('ip6', 'saddr'), { t: 'ip', ip }), markForMasquerade]),
};
const dnatRule = (proto: 'tcp' | 'udp' | 'sctp') => {
  const l4protoIs = eq(meta('l4proto'), { t: 'sym', s: proto });
  return new AddressPortRule((ip, port) => [l4protoIs, { t: 'dnat', ip, port }]);
};
const dnat = { tcp: dnatRule('tcp'), udp: dnatRule('udp'), sctp: dnatRule('sctp') };

export function emitEndpoints(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, affinity: AffinityForm): void {
  const { sp } = plan;
  const endpoints = plan.endpoints.allReachableEndpoints;
  if (ctx.forms.hairpin === 'set') emitHairpinElements(b, plan);
  if (!usesEndpointChains(ctx.forms, sp.affinityTimeout !== undefined && affinity.kind === 'endpoint-chains')) return;
  const chained = endpointChainAffinity(affinity, 'an endpoint chain');
  const dnatToEndpoint = dnat[plan.proto];
  const hairpinOf = ctx.forms.hairpin === 'endpoint-rule' ? hairpin[ctx.family] : undefined;
  const names = plan.endpointNames(endpoints);
  for (let i = 0; i < endpoints.length; i++) {
    const ep = endpoints[i];
    const { chain } = names[i];
    b.chain({ name: chain });
    // Affinity is per client IP and Service port, whichever Service IP was used.
    if (sp.affinityTimeout !== undefined) chained.declare(b, ctx, plan, names[i]);
    if (sp.affinityTimeout !== undefined && chained.oneEndpointRule) {
      // The update and the DNAT in one rule: a NAT statement ends the chain either way.
      if (hairpinOf) throw new InternalError(`endpoint chain ${chain}: one rule cannot hold the hairpin rule as well`);
      b.rule({ chain, stmts: [chained.update(ctx, plan, names[i]), plan.l4protoIs, { t: 'dnat', ip: ep.ip, port: ep.port }] });
      continue;
    }
    if (hairpinOf) b.templateRule(chain, hairpinOf, ep.ip, ep.port);
    if (sp.affinityTimeout !== undefined) b.rule({ chain, stmts: [chained.update(ctx, plan, names[i])] });
    b.templateRule(chain, dnatToEndpoint, ep.ip, ep.port);
  }
}

/**
 * The connection each of this node's endpoints would make to itself through the Service
 * port, as the masquerading chain sees it after DNAT: EP . EP . protocol . port. An
 * endpoint that serves several Service ports on one port is one element.
 */
function emitHairpinElements(b: TableBuilder, plan: ServicePortPlan): void {
  const proto: KeyPart = { t: 'proto', name: plan.proto };
  for (const ep of plan.endpoints.allReachableEndpoints) {
    if (!ep.isLocal) continue;
    b.element({ set: HAIRPIN_SET, key: [{ t: 'ip', ip: ep.ip }, { t: 'ip', ip: ep.ip }, proto, { t: 'port', n: ep.port }] });
  }
}
