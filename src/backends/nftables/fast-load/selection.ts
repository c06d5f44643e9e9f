// Endpoint choice without an anonymous set: a chain of `numgen random mod K 0 goto e`
// rules instead of kube-proxy's `numgen random mod N vmap { ... }`. Each anonymous set
// costs the kernel a walk of the whole load transaction; rules cost nothing of the kind.
import type { Endpoint } from '../../../model/types.js';
import { eq, goto, num, type Stmt } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { AffinityForm } from '../affinity.js';
import type { FamilyContext } from '../context.js';
import type { ServicePortPlan } from '../plan.js';
import { affinityMember } from './affinity.js';
import { emitEndpointMap } from './endpoint-map.js';

/**
 * The rules that pick one of `targets` uniformly: rule k (0-based) draws a new random
 * number and is reached with probability (N-k)/N, taken with 1/(N-k), so each target gets
 * 1/N; the last is reached with 1/N and taken. One target: a plain goto.
 */
export function uniformChoice(targets: string[]): Stmt[][] {
  const n = targets.length;
  const rules: Stmt[][] = [];
  for (let k = 0; k < n - 1; k++) rules.push([eq({ t: 'numgen', mod: n - k }, num(0)), goto(targets[k])]);
  if (n > 0) rules.push([goto(targets[n - 1])]);
  return rules;
}

/** The endpoint choice of a Service-port chain: affinity first, in the chain's order, then the rules above. */
export function emitUniformSelection(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[], affinity: AffinityForm): void {
  const names = plan.endpointNames(endpoints);
  if (plan.sp.affinityTimeout !== undefined) {
    for (const n of names) b.rule({ chain, stmts: affinity.lookup(ctx, n) });
  }
  for (const stmts of uniformChoice(names.map((n) => n.chain))) b.rule({ chain, stmts });
}

/**
 * The endpoint choice with table-wide endpoint maps: a Service port without affinity DNATs
 * through its map (endpoint-map.ts); one with affinity has the work of kube-proxy's endpoint
 * chains in its own rules (emitAffinityRules). Neither has endpoint chains.
 */
export function emitMapSelection(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[], affinity: AffinityForm): void {
  if (plan.sp.affinityTimeout !== undefined) {
    emitAffinityRules(b, ctx, plan, chain, endpoints, affinity);
    return;
  }
  emitEndpointMap(b, ctx, chain, endpoints, plan);
}


/**
 * Session affinity without endpoint chains. kube-proxy's endpoint chain is `update` then
 * `meta l4proto P dnat to EP`; a NAT statement ends the rule and the chain (it returns the
 * hook's accept), so that work can end the Service chain's rules that went to the chain:
 *
 *   per endpoint i (kube-proxy's lookups, in order): `KEY_i @affinity update @affinity { KEY_i timeout T } meta l4proto P dnat to EP_i`
 *   then the uniform draw: `numgen random mod K 0 update @affinity { KEY_i timeout T } meta l4proto P dnat to EP_i`
 *   (K = N .. 2), the last endpoint's rule without a draw.
 *
 * Both paths refresh the client's element and DNAT as the endpoint chain does, in its order.
 */
function emitAffinityRules(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[], affinity: AffinityForm): void {
  const names = plan.endpointNames(endpoints);
  const { l4protoIs } = plan;
  const work = endpoints.map((ep, i): Stmt[] => {
    affinity.declare(b, ctx, plan, names[i]);
    return [affinity.update(ctx, plan, names[i]), l4protoIs, { t: 'dnat', ip: ep.ip, port: ep.port }];
  });
  names.forEach((n, i) => b.rule({ chain, stmts: [affinityMember(ctx, n), ...work[i]] }));
  const n = endpoints.length;
  work.forEach((stmts, k) => b.rule({ chain, stmts: k < n - 1 ? [eq({ t: 'numgen', mod: n - k }, num(0)), ...stmts] : stmts }));
}
