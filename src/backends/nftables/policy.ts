// The per-Service-port chains: masquerading of ClusterIP traffic, the external chain with
// its short-circuits, and the policy chains that pick an endpoint (affinity first, then
// `numgen random`).
import type { Endpoint, FamilyModel } from '../../model/types.js';
import { eq, goto, num, type Stmt } from '../../nft/expr.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import { endpointChainAffinity, type AffinityForm } from './affinity.js';
import type { FamilyContext } from './context.js';
import type { DispatchRoute, OwnedDestinations } from './dispatch.js';
import type { InlinedPolicy, ServicePortEmitters } from './layout.js';
import { localMatch } from './local-detector.js';
import type { ServicePortPlan } from './plan.js';
import { usesEndpointChains } from './versions.js';

const fibSaddrLocal: Stmt = eq({ t: 'fib', flag: 'saddr', result: 'type' }, { t: 'sym', s: 'local' });

/**
 * The port's chains, and where its dispatch elements go: its policy chain for ClusterIP
 * traffic and its external chain for the rest, or, for a policy chain the layout would
 * make a lone `goto` (`emit.passThrough`), the chain it would go to: that policy chain is
 * not made, and what would go to it goes there; for a policy chain the layout does in the
 * external chain's own rules (`emit.inlinePolicyChains`), its DNAT there, and no
 * `service-ips` element for a ClusterIP the layout finds otherwise.
 */
export function emitPolicyChains(
  b: TableBuilder,
  ctx: FamilyContext,
  m: FamilyModel,
  plan: ServicePortPlan,
  owned: OwnedDestinations,
  emit: Pick<ServicePortEmitters, 'selection' | 'affinity' | 'passThrough' | 'masqueradeSets' | 'inlinePolicyChains'>,
): DispatchRoute {
  const { sp, chains } = plan;
  // The per-Service ClusterIP masquerade rule (1.35) is written in the internal chain, which must then exist.
  const perServiceMasquerade = ctx.forms.clusterIPMasquerade === 'per-service';
  const passThrough = (endpoints: Endpoint[]) => (perServiceMasquerade ? undefined : emit.passThrough?.(plan, endpoints));
  const clusterTarget = plan.usesClusterPolicyChain ? passThrough(plan.endpoints.clusterEndpoints) : undefined;
  const localTarget = plan.usesLocalPolicyChain ? passThrough(plan.endpoints.localEndpoints) : undefined;
  const inlined: InlinedPolicy = (!perServiceMasquerade && emit.inlinePolicyChains?.(b, ctx, plan, owned)) || {};
  const to = (chain: string) => (chain === chains.clusterPolicy ? (clusterTarget ?? chain) : chain === chains.localPolicy ? (localTarget ?? chain) : chain);
  // What the external chain does to send a packet on to a policy chain.
  const toPolicy = (chain: string): Stmt[] =>
    (chain === chains.clusterPolicy ? inlined.cluster : chain === chains.localPolicy ? inlined.local : undefined) ?? [goto(to(chain))];
  const makesCluster = plan.usesClusterPolicyChain && !clusterTarget && !inlined.cluster;
  const makesLocal = plan.usesLocalPolicyChain && !localTarget && !inlined.local;
  if (makesCluster) b.chain({ name: chains.clusterPolicy });
  if (makesLocal) b.chain({ name: chains.localPolicy });
  // With Cluster policy the external chain only marks and goes to the policy chain: where
  // the layout marks by a set in the services chain, there is none.
  const masquerade = plan.usesExternalChain && !sp.externalPolicyLocal && plan.hasExternalEndpoints ? emit.masqueradeSets : undefined;
  const usesExternalChain = plan.usesExternalChain && !masquerade;
  if (usesExternalChain) b.chain({ name: chains.external });

  // ClusterIP traffic from outside the cluster is masqueraded: it may have been routed to
  // this node by a static route for the Service range and leave again to another node.
  // (From 1.36 one rule in `services` does it for every ClusterIP: fixed.ts.)
  if (plan.hasInternalEndpoints && perServiceMasquerade) {
    const proto = plan.proto;
    const match: Stmt[] = [eq(ctx.daddr, { t: 'ip', ip: sp.clusterIP }), eq({ t: 'payload', proto, field: 'dport' }, num(sp.port))];
    const notLocal = localMatch(ctx, m.localDetector, false);
    if (m.masqueradeAll) b.rule({ chain: plan.internalChain, stmts: [...match, ctx.markForMasquerade] });
    else if (notLocal) b.rule({ chain: plan.internalChain, stmts: [...match, notLocal, ctx.markForMasquerade] });
  }

  if (usesExternalChain && sp.externalPolicyLocal) {
    emitLocalExternalRules(b, ctx, m, chains.external, toPolicy(chains.clusterPolicy), plan.hasExternalEndpoints ? toPolicy(chains.localPolicy) : undefined);
  } else if (usesExternalChain) {
    // Cluster policy may send the packet to another node: masquerade.
    b.rule({ chain: chains.external, stmts: [ctx.markForMasquerade] });
    if (plan.hasExternalEndpoints) b.rule({ chain: chains.external, stmts: toPolicy(chains.clusterPolicy) });
  }

  if (makesCluster) emit.selection(b, ctx, plan, chains.clusterPolicy, plan.endpoints.clusterEndpoints, emit.affinity);
  if (makesLocal) emit.selection(b, ctx, plan, chains.localPolicy, plan.endpoints.localEndpoints, emit.affinity);
  const external = masquerade ? to(plan.externalPolicyChain) : chains.external;
  return { internal: inlined.cluster ? undefined : to(plan.internalChain), external, nodePort: external, masquerade };
}

/**
 * The rules of an external chain with Local policy: it keeps the client's source, except
 * for two cases that behave as if they went out to the load balancer and came back (pod
 * traffic and the node's own, sent as ClusterIP traffic by `toCluster`); the rest goes to
 * the local endpoints by `toLocal` (none: it falls through, to be dropped as having none).
 */
export function emitLocalExternalRules(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, chain: string, toCluster: Stmt[], toLocal: Stmt[] | undefined): void {
  const podTraffic = localMatch(ctx, m.localDetector, true);
  if (podTraffic) b.rule({ chain, stmts: [podTraffic, ...toCluster], comment: 'short-circuit pod traffic' });
  b.rule({ chain, stmts: [fibSaddrLocal, ctx.markForMasquerade], comment: 'masquerade local traffic' });
  b.rule({ chain, stmts: [fibSaddrLocal, ...toCluster], comment: 'short-circuit local traffic' });
  if (toLocal) b.rule({ chain, stmts: toLocal });
}

export function emitEndpointSelection(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[], affinity: AffinityForm): void {
  const { sp } = plan;
  if (!usesEndpointChains(ctx.forms, sp.affinityTimeout !== undefined)) {
    emitDirectDnat(b, ctx, plan, chain, endpoints);
    return;
  }
  const names = plan.endpointNames(endpoints);
  if (sp.affinityTimeout !== undefined) {
    const chained = endpointChainAffinity(affinity, "kube-proxy's endpoint selection");
    for (const n of names) b.rule({ chain, stmts: chained.lookup(ctx, n) });
  }
  b.rule({
    chain,
    stmts: [{ t: 'numgen-vmap', mod: endpoints.length, targets: names.map((n) => ({ kind: 'goto', target: n.chain })) }],
  });
}

/**
 * 1.36 on, a Service port without session affinity: the policy chain DNATs itself, to an
 * endpoint drawn by a numgen map (kube-proxy's endpoint order); 1.37 DNATs a lone endpoint
 * without the map.
 */
function emitDirectDnat(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[]): void {
  const { l4protoIs } = plan;
  if (endpoints.length === 1 && ctx.forms.dnat === 'numgen-map-or-direct') {
    b.rule({ chain, stmts: [l4protoIs, { t: 'dnat', ip: endpoints[0].ip, port: endpoints[0].port }] });
    return;
  }
  b.rule({ chain, stmts: [l4protoIs, { t: 'numgen-dnat', mod: endpoints.length, targets: endpoints.map((ep) => ({ ip: ep.ip, port: ep.port })) }] });
}
