// Service ports with Local external policy, without policy chains of their own. kube-proxy
// gives such a port a cluster policy chain (ClusterIP traffic, and the external chain's
// short-circuits of pod and local traffic), a local policy chain (the rest of the external
// traffic) and the external chain; without affinity each policy chain is one DNAT rule.
// fast-load writes that rule in the external chain itself, after the match that went to
// the chain:
//
//   chain external-…  { ip saddr 10.0.0.0/8 meta l4proto tcp dnat to numgen random mod 2 offset B map @endpoint-ips-XX:8080 comment "short-circuit pod traffic"
//                       fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
//                       fib saddr type local meta l4proto tcp dnat to numgen … (the same) comment "short-circuit local traffic"
//                       meta l4proto tcp dnat to numgen random mod 1 offset B' map @endpoint-ips-YY:8080 }
//
// A DNAT ends the chain as the `goto` did (the chain it went to ended in the DNAT), and
// the draw is the chain's own, from the range it would have taken (key-ranges.ts, by the
// chain's name), so the same endpoints with the same odds. The local chain is reached
// only from the external chain when internal traffic has Cluster policy: it is never
// made. The cluster chain is reached by the ClusterIP's `service-ips` element too: it is
// not made when the ClusterIP is found by `dnat-cluster-ips` instead (shared-dnat.ts),
// where the elements that costs are cheaper than the chain (below), or when another port
// owns the ClusterIP.
import type { Stmt } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import type { OwnedDestinations } from '../dispatch.js';
import type { InlinedPolicy } from '../layout.js';
import type { ServicePortPlan } from '../plan.js';
import { endpointMapDnat } from './endpoint-map.js';
import { emitClusterIPDraw } from './shared-dnat.js';

/**
 * Whether the cluster chain's ClusterIP traffic is better found by `dnat-cluster-ips`:
 * its N endpoints as address-map elements (about twice an endpoint-map element each, which
 * the inlined rules keep) against the chain (about four) and the ClusterIP's verdict
 * element (about one more) (shared-dnat.ts measures the units): 2N <= 5.
 */
export function drawsClusterIP(plan: ServicePortPlan): boolean {
  return 2 * plan.endpoints.clusterEndpoints.length <= 4 + 1;
}

/** The statements standing for the port's policy chains in its external chain, or undefined where kube-proxy's chains stay. */
export function inlineLocalPolicy(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, owned: OwnedDestinations): InlinedPolicy | undefined {
  const { sp, chains, endpoints } = plan;
  if (!sp.externalPolicyLocal || sp.internalPolicyLocal || sp.affinityTimeout !== undefined || !plan.usesExternalChain) return undefined;
  let cluster: Stmt[] | undefined;
  if (plan.usesClusterPolicyChain && (!owned.clusterIP || drawsClusterIP(plan))) {
    if (owned.clusterIP) emitClusterIPDraw(b, ctx, plan, owned.clusterIP);
    cluster = endpointMapDnat(b, ctx, chains.clusterPolicy, endpoints.clusterEndpoints, plan);
  }
  const local = plan.usesLocalPolicyChain ? endpointMapDnat(b, ctx, chains.localPolicy, endpoints.localEndpoints, plan) : undefined;
  return { cluster, local };
}
