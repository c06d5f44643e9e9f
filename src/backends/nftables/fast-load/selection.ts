// Endpoint choice without an anonymous set: a chain of `numgen random mod K 0 goto e`
// rules instead of kube-proxy's `numgen random mod N vmap { ... }`. Each anonymous set
// costs the kernel a walk of the whole load transaction; rules cost nothing of the kind.
import type { Endpoint } from '../../../model/types.js';
import { eq, goto, num, type Stmt } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import { endpointChainAffinity, type AffinityForm } from '../affinity.js';
import type { FamilyContext } from '../context.js';
import type { ServicePortPlan } from '../plan.js';
import { emitEndpointMap } from './endpoint-map.js';
import { claimDraw } from './key-ranges.js';

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
    const chained = endpointChainAffinity(affinity, 'a draw among endpoint chains');
    for (const n of names) b.rule({ chain, stmts: chained.lookup(ctx, n) });
  }
  for (const stmts of uniformChoice(names.map((n) => n.chain))) b.rule({ chain, stmts });
}

/**
 * The endpoint choice with table-wide maps: a Service port without affinity DNATs through
 * its endpoint map (endpoint-map.ts). One with affinity looks the client up for each
 * endpoint in kube-proxy's order: recorded after NAT (IPv4), each hit DNATs itself and the
 * draw is the endpoint map's (affinity-records.ts); else each hit is a `goto`
 * to the endpoint's chain (one rule: the update, then the DNAT; endpoints.ts), and the
 * draw one of those chains through a table-wide verdict map (with one endpoint, only the
 * `goto` to its chain).
 */
export function emitMapSelection(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[], affinity: AffinityForm): void {
  if (plan.sp.affinityTimeout === undefined) {
    emitEndpointMap(b, ctx, chain, endpoints, plan);
    return;
  }
  if (affinity.kind === 'recorded-after-nat') {
    affinity.select(b, ctx, plan, chain, endpoints);
    return;
  }
  const names = plan.endpointNames(endpoints);
  // One endpoint: the lookup's `goto` and the draw's are the same chain, and a lookup has no
  // effect of its own, so the chain is the draw alone (the endpoint chain still refreshes);
  // the layout sends to the endpoint chain without it (affinityPassThrough).
  if (names.length > 1) for (const n of names) b.rule({ chain, stmts: affinity.lookup(ctx, n) });
  emitDrawMap(b, chain, names.map((n) => n.chain));
}

/** The table-wide verdict maps of the draws to endpoint chains (session affinity). */
const AFFINITY_DRAW_MAPS = 'affinity-draw';

/**
 * The draw among a Service port's endpoint chains, as kube-proxy's `numgen random mod N
 * vmap { 0 : goto E0 , ... }` but through a table-wide verdict map: `numgen random mod N
 * offset B vmap @affinity-draw-XX`, whose elements `B+i : goto Ei` are the chains in the
 * same order (an anonymous map per chain would cost the kernel a walk of the transaction
 * each). One chain: a plain goto.
 */
function emitDrawMap(b: TableBuilder, chain: string, targets: string[]): void {
  if (targets.length === 1) {
    b.rule({ chain, stmts: [goto(targets[0])] });
    return;
  }
  const { map, base, key } = claimDraw(b, chain, AFFINITY_DRAW_MAPS, targets.length);
  if (!b.hasSet(map)) b.set({ name: map, kind: 'map', keyType: ['integer'], typeof: { t: 'numgen', mod: 1 } });
  targets.forEach((target, i) => b.element({ set: map, key: [{ t: 'int', n: base + i }], value: { kind: 'goto', target } }));
  b.rule({ chain, stmts: [{ t: 'vmap', key, map }] });
}

/**
 * The endpoint chain a policy chain with session affinity and one endpoint would only
 * `goto` (emitMapSelection): the layout sends there directly, without the policy chain
 * (a chain costs nft about four times an element to load).
 */
export function affinityPassThrough(plan: ServicePortPlan, endpoints: Endpoint[]): string | undefined {
  return plan.sp.affinityTimeout !== undefined && endpoints.length === 1 ? plan.endpointNames(endpoints)[0].chain : undefined;
}
