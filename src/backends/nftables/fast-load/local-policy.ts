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
//
// With few endpoints the external chain itself is shared by every such port of its
// protocol and counts of cluster (C) and local (L) endpoints, as the DNAT chains of
// Cluster-policy ports are (shared-dnat.ts): its draws keyed by the packet's destination,
// the cluster endpoints in the address and NodePort maps (the ClusterIP's too), the local
// ones in maps of their own, the same keys from 0:
//
//   chain dnat-local-external-tcp-2-1 { ip saddr 10.0.0.0/8 dnat ip addr . port to ip daddr . tcp dport . numgen random mod 2 offset 1 map @service-endpoints-tcp comment "short-circuit pod traffic"
//                                       fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
//                                       fib saddr type local dnat … (the same) comment "short-circuit local traffic"
//                                       dnat ip addr . port to ip daddr . tcp dport . numgen random mod 1 map @service-local-endpoints-tcp }
//   chain dnat-local-nodeport-tcp-2-1 { the same, keyed `tcp dport . numgen …` in @nodeport-endpoints-tcp and @nodeport-local-endpoints-tcp }
import type { FamilyModel } from '../../../model/types.js';
import type { Stmt } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import { ownedExternalAddresses, type DispatchRoute, type OwnedDestinations } from '../dispatch.js';
import type { InlinedPolicy } from '../layout.js';
import type { L4Proto, ServicePortPlan } from '../plan.js';
import { emitLocalExternalRules } from '../policy.js';
import { endpointMapDnat } from './endpoint-map.js';
import {
  addAddressDraws,
  addDraws,
  addNodePortDraws,
  addressDestination,
  addressDnat,
  drawDnat,
  emitClusterIPDraw,
  nodePortDestination,
  nodePortDnat,
  type DrawMap,
} from './shared-dnat.js';

/**
 * Whether the cluster chain's ClusterIP traffic is better found by `dnat-cluster-ips`:
 * its N endpoints as address-map elements (about twice an endpoint-map element each, which
 * the inlined rules keep) against the chain (about four) and the ClusterIP's verdict
 * element (about one more) (shared-dnat.ts measures the units): 2N <= 5.
 */
export function drawsClusterIP(plan: ServicePortPlan): boolean {
  return 2 * plan.endpoints.clusterEndpoints.length <= 4 + 1;
}

/** Whether the port's external chain can do its policy chains' work: Local external and Cluster internal policy, no affinity. */
function inlinesPolicy(plan: ServicePortPlan): boolean {
  const { sp } = plan;
  return sp.externalPolicyLocal && !sp.internalPolicyLocal && sp.affinityTimeout === undefined && plan.usesExternalChain;
}

/** Whether its external chain can do without the cluster chain too: its ClusterIP drawn, or another's. */
function inlinesCluster(plan: ServicePortPlan, owned: OwnedDestinations): boolean {
  return inlinesPolicy(plan) && plan.usesClusterPolicyChain && (!owned.clusterIP || drawsClusterIP(plan));
}

/**
 * Whether the port's external destinations go to the shared chains: when its external
 * chain would DNAT in place of both policy chains and the shared form costs nft no more.
 * Its own external chain costs a chain (about four endpoint-map elements, shared-dnat.ts)
 * and about three for each further rule, and draws from C + L endpoint-map elements; the
 * shared form, (C + L) elements of the shared maps, about one and a half each, for each of
 * its D external destinations (external and load-balancer IPs, NodePort). Measured on nft
 * 1.0.6, 2,700 Local load-balancer Services each way, fresh loads (docs/fast-load.md):
 * shared cheaper at (C, L, D) = (2, 2, 2), (2, 1, 3) and (1, 1, 5), even at (2, 1, 4).
 */
export function sharesLocalExternal(plan: ServicePortPlan, owned: OwnedDestinations, podRule: boolean): boolean {
  if (!inlinesCluster(plan, owned)) return false;
  const c = plan.endpoints.clusterEndpoints.length;
  const l = plan.usesLocalPolicyChain ? plan.endpoints.localEndpoints.length : 0;
  const d = ownedExternalAddresses(owned).length + (owned.nodePort !== undefined ? 1 : 0);
  const rules = (podRule ? 1 : 0) + 2 + (l > 0 ? 1 : 0);
  return d > 0 && 3 * (c + l) * d <= 2 * (4 + 3 * (rules - 1) + c + l);
}

/** The names of the shared chains of a protocol and counts of cluster and local endpoints, and of the local endpoints' maps. */
export function sharedLocalNames(proto: L4Proto, c: number, l: number) {
  return {
    external: `dnat-local-external-${proto}-${c}-${l}`,
    nodePort: `dnat-local-nodeport-${proto}-${c}-${l}`,
    addressMap: { name: `service-local-endpoints-${proto}`, by: 'address' } as DrawMap,
    nodePortMap: { name: `nodeport-local-endpoints-${proto}`, by: 'nodePort' } as DrawMap,
  };
}

/**
 * The port's endpoints as elements of the shared maps for each destination it owns, and
 * the shared chains its external destinations go to (made with the first port that uses
 * them); its ClusterIP is drawn by `dnat-cluster-ips`.
 */
export function emitSharedLocalExternal(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, plan: ServicePortPlan, owned: OwnedDestinations): DispatchRoute {
  const { proto } = plan;
  const local = plan.usesLocalPolicyChain ? plan.endpoints.localEndpoints : [];
  const c = plan.endpoints.clusterEndpoints.length;
  const names = sharedLocalNames(proto, c, local.length);
  if (owned.clusterIP) emitClusterIPDraw(b, ctx, plan, owned.clusterIP);
  const addresses = ownedExternalAddresses(owned);
  for (const ip of addresses) {
    addAddressDraws(b, ctx, plan, ip);
    addDraws(b, ctx, proto, names.addressMap, addressDestination(ip, plan), local, 0);
  }
  if (addresses.length > 0 && !b.hasChain(names.external)) {
    b.chain({ name: names.external });
    emitLocalExternalRules(b, ctx, m, names.external, [addressDnat(ctx, proto, c)], local.length > 0 ? [drawDnat(ctx, proto, names.addressMap, local.length, 0)] : undefined);
  }
  if (owned.nodePort !== undefined) {
    addNodePortDraws(b, ctx, plan, owned.nodePort);
    addDraws(b, ctx, proto, names.nodePortMap, nodePortDestination(owned.nodePort), local, 0);
    if (!b.hasChain(names.nodePort)) {
      b.chain({ name: names.nodePort });
      const toLocal = local.length > 0 ? [drawDnat(ctx, proto, names.nodePortMap, local.length, 0)] : undefined;
      emitLocalExternalRules(b, ctx, m, names.nodePort, [nodePortDnat(ctx, proto, c)], toLocal);
    }
  }
  return { external: names.external, nodePort: names.nodePort };
}

/** The statements standing for the port's policy chains in its external chain, or undefined where kube-proxy's chains stay. */
export function inlineLocalPolicy(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, owned: OwnedDestinations): InlinedPolicy | undefined {
  const { chains, endpoints } = plan;
  if (!inlinesPolicy(plan)) return undefined;
  let cluster: Stmt[] | undefined;
  if (inlinesCluster(plan, owned)) {
    if (owned.clusterIP) emitClusterIPDraw(b, ctx, plan, owned.clusterIP);
    cluster = endpointMapDnat(b, ctx, chains.clusterPolicy, endpoints.clusterEndpoints, plan);
  }
  const local = plan.usesLocalPolicyChain ? endpointMapDnat(b, ctx, chains.localPolicy, endpoints.localEndpoints, plan) : undefined;
  return { cluster, local };
}
