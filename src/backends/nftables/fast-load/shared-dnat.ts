// Service ports without chains of their own. kube-proxy gives every Service port a policy
// chain (and an external chain when it has a NodePort, external or load-balancer IPs);
// where the port has neither session affinity nor a Local traffic policy those chains do
// the same for every Service port with as many endpoints: mark external traffic for
// masquerade, then DNAT to one of the endpoints at random. fast-load finds such a port's
// endpoint in a map keyed by the packet's own destination and a draw, with rules shared by
// every Service port of its protocol and endpoint count:
//
//   chain services            { ... ; ip daddr . meta l4proto . th dport vmap @service-ips ; ip daddr @cluster-ips jump dnat-cluster-ips ; <NodePorts> }
//   chain dnat-cluster-ips    { dnat ip to ip daddr . tcp dport . numgen random mod 3 offset 3 map @service-endpoints-tcp ; <a rule for each count> }
//   chain dnat-external-tcp-3 { mark set mark or 0x00004000 ; dnat ip to ip daddr . tcp dport . numgen random mod 3 offset 3 map @service-endpoints-tcp }
//   chain dnat-nodeport-tcp-3 { mark set mark or 0x00004000 ; dnat ip to tcp dport . numgen random mod 3 map @nodeport-endpoints-tcp }
//
// with the elements `A . P . B+i : E_i . P_i` for each address A the port is reached on
// (ClusterIP, external and load-balancer IPs) and `N . i : E_i . P_i` for its NodePort N,
// in kube-proxy's endpoint order: draw i of N (each 1/N) finds kube-proxy's endpoint i.
// Its external and load-balancer IPs and its NodePort have a `service-ips` or
// `service-nodeports` element (to the chains that mark); its ClusterIP has none: after the
// map, the rules of `dnat-cluster-ips` try each count's draw, and a lookup that finds no
// element ends its rule without a match. Each count draws in its own range of numbers
// (B = N(N-1)/2: 0 for one endpoint, 1-2 for two, 3-5 for three), so a port with three
// endpoints has no element the draw for one or two could find. A `service-ips` element
// costs nft about twice a plain one (a verdict to resolve); the ClusterIP is most of a
// small port's elements. The kernel pays for chains and rules more than for elements
// (docs/fast-load.md): with one endpoint a Service the per-port chains were most of the
// table.
//
// One map per protocol for every count: an endpoint removed from a port changes the
// port's elements (their range moves) and its dispatch elements, in one map. Each element
// is checked against every rule bound to its map when it is added, so a map is bound by
// a few rules per endpoint count in the table, a few dozen in a large cluster.
//
// The rules hold no `meta l4proto` match: the key's `tcp dport` brings nft's own
// dependency on the protocol, and nft 1.0.6 lists the rule without one (a match written
// here would never list back, and the diff would rewrite it every time).
import { InternalError } from '../../../diag/diagnostic.js';
import type { Endpoint } from '../../../model/types.js';
import type { IP } from '../../../net/ip.js';
import { concat, payload, type Expr, type Stmt } from '../../../nft/expr.js';
import type { KeyPart } from '../../../nft/objects.js';
import { keyString, type TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import { ownedAddresses, ownedExternalAddresses, type DispatchRoute, type OwnedDestinations } from '../dispatch.js';
import type { L4Proto, ServicePortPlan } from '../plan.js';
import { perTable } from './per-table.js';

/**
 * Whether the port's chains would do nothing but the shared chains' work: no session
 * affinity (a lookup per endpoint, in the port's own chain), Cluster policy for internal
 * and external traffic (Local policy short-circuits and drops in the external chain), and
 * endpoints for both.
 */
function couldShare(plan: ServicePortPlan): boolean {
  const { sp } = plan;
  return (
    sp.affinityTimeout === undefined &&
    !sp.internalPolicyLocal &&
    !sp.externalPolicyLocal &&
    plan.usesClusterPolicyChain &&
    !plan.usesLocalPolicyChain &&
    plan.hasInternalEndpoints &&
    plan.hasExternalEndpoints
  );
}

/**
 * Whether the port shares the DNAT chains: when it could, and the shared form costs nft no
 * more to load. Its own form is a chain (two with an external chain), an element of an
 * endpoint map per endpoint (a number keyed by a number) and a dispatch element per
 * destination; the shared form an element per endpoint for each of its D destinations
 * (keyed by three fields, holding two) and a dispatch element for each but the ClusterIP.
 * Measured on nft 1.0.6 (10,000 ClusterIP Services x N endpoints, fresh loads in each
 * form, CPU and peak memory): the shared element costs about twice the endpoint map's
 * (19.6 against 10.8 us, 2.7 against 1.4 KB), a chain about four times (45-50 us, 5.5 KB),
 * and the ClusterIP's verdict element the shared form does without about one more; so the
 * shared form is no dearer while N x (2D - 1) <= 4 x chains + 1 (+ 0 when another port owns
 * the ClusterIP): with the ClusterIP alone up to 5 endpoints (measured, CPU: 0.38-0.53 s
 * against 0.73-0.95 s at N = 1, 1.10-1.16 against 1.18-1.26 at 5, even at 6, dearer at 8),
 * with a NodePort up to 3 (2,700 NodePort Services: 0.32-0.36 against 0.43-0.47 s at 3,
 * about even at 4, dearer at 6), with a NodePort and a load-balancer IP 1.
 */
export function sharesDnatChains(plan: ServicePortPlan, owned: OwnedDestinations): boolean {
  if (!couldShare(plan)) return false;
  const n = plan.endpoints.clusterEndpoints.length;
  const destinations = ownedAddresses(owned).length + (owned.nodePort !== undefined ? 1 : 0);
  const chains = plan.usesExternalChain ? 2 : 1;
  // A port whose destinations all belong to other ports (claims.ts) keeps its chains, as
  // kube-proxy's table has them: nothing reaches them either way.
  return destinations > 0 && n * (2 * destinations - 1) <= 4 * chains + (owned.clusterIP ? 1 : 0);
}

/** The chain the services chain jumps to for ClusterIP traffic; made with the table's fixed part. */
export const CLUSTER_IP_DNAT_CHAIN = 'dnat-cluster-ips';

/** The names of the shared chains of a protocol and endpoint count. */
export function sharedDnatNames(proto: L4Proto, n: number) {
  return { external: `dnat-external-${proto}-${n}`, nodePort: `dnat-nodeport-${proto}-${n}` };
}

/** The protocols and counts (`tcp 3`) whose ClusterIP rule a table has, by its builder. */
const clusterIPDraws = perTable(() => new Set<string>());

/** The first number a draw among n endpoints gives in the address map: n(n-1)/2, so that each count has its own range. */
export const drawBase = (n: number): number => (n * (n - 1)) / 2;

const draw = (n: number, offset = 0): Expr => ({ t: 'numgen', mod: n, ...(offset ? { offset } : {}) });

/**
 * A table-wide map of endpoints keyed by a destination and a draw: by address (`A . P .
 * k`, an external address or a ClusterIP and its port) or by NodePort (`N . k`).
 */
export interface DrawMap {
  name: string;
  by: 'address' | 'nodePort';
}

const destinationKey = (ctx: FamilyContext, proto: L4Proto, by: DrawMap['by']): Expr[] => (by === 'address' ? [ctx.daddr, payload(proto, 'dport')] : [payload(proto, 'dport')]);

/** `dnat ... to ip daddr . P dport . numgen random mod N offset B map @M` (or `P dport . numgen ...` by NodePort): a draw among N from B. */
export function drawDnat(ctx: FamilyContext, proto: L4Proto, map: DrawMap, n: number, base: number): Stmt {
  return { t: 'map-dnat', family: ctx.family, key: concat(...destinationKey(ctx, proto, map.by), draw(n, base)), map: map.name };
}

/**
 * `endpoints` as the map's elements for one destination (`A` and the port, or the
 * NodePort), from key `base` in their order, the map declared with its first element.
 * Each destination has one owner (claims.ts), so no two ports write one key.
 */
export function addDraws(b: TableBuilder, ctx: FamilyContext, proto: L4Proto, map: DrawMap, destination: KeyPart[], endpoints: readonly Endpoint[], base: number): void {
  if (endpoints.length === 0) return;
  if (!b.hasSet(map.name)) {
    const keyType = map.by === 'address' ? [ctx.addrType, 'inet_service' as const, 'integer' as const] : ['inet_service' as const, 'integer' as const];
    const data = { types: [ctx.addrType, 'inet_service' as const], typeof: concat(ctx.daddr, payload(proto, 'dport')) };
    b.set({ name: map.name, kind: 'map', keyType, typeof: concat(...destinationKey(ctx, proto, map.by), draw(1)), data });
  }
  endpoints.forEach((ep, i) => {
    const key: KeyPart[] = [...destination, { t: 'int', n: base + i }];
    if (!b.element({ set: map.name, key, data: [{ t: 'ip', ip: ep.ip }, { t: 'port', n: ep.port }] })) throw new InternalError(`${map.name} element ${keyString(key)} written twice`);
  });
}

/** The address map of a protocol's cluster endpoints, and its NodePort map. */
const clusterDrawMaps = (proto: L4Proto): { address: DrawMap; nodePort: DrawMap } => ({
  address: { name: `service-endpoints-${proto}`, by: 'address' },
  nodePort: { name: `nodeport-endpoints-${proto}`, by: 'nodePort' },
});

/** The draw among the port's N cluster endpoints by address: in the address map, from N(N-1)/2. */
export const addressDnat = (ctx: FamilyContext, proto: L4Proto, n: number): Stmt => drawDnat(ctx, proto, clusterDrawMaps(proto).address, n, drawBase(n));

/** The draw among the port's N cluster endpoints by NodePort: in the NodePort map, from 0. */
export const nodePortDnat = (ctx: FamilyContext, proto: L4Proto, n: number): Stmt => drawDnat(ctx, proto, clusterDrawMaps(proto).nodePort, n, 0);

/** A destination in a map keyed by address: the address and the port's own port. */
export const addressDestination = (ip: IP, plan: ServicePortPlan): KeyPart[] => [{ t: 'ip', ip }, { t: 'port', n: plan.sp.port }];

/** A destination in a map keyed by NodePort. */
export const nodePortDestination = (nodePort: number): KeyPart[] => [{ t: 'port', n: nodePort }];

/** The port's cluster endpoints as the address map's elements for `ip`, at its count's range. */
export function addAddressDraws(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, ip: IP): void {
  const endpoints = plan.endpoints.clusterEndpoints;
  addDraws(b, ctx, plan.proto, clusterDrawMaps(plan.proto).address, addressDestination(ip, plan), endpoints, drawBase(endpoints.length));
}

/** The port's cluster endpoints as the NodePort map's elements for its NodePort, from 0. */
export function addNodePortDraws(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, nodePort: number): void {
  addDraws(b, ctx, plan.proto, clusterDrawMaps(plan.proto).nodePort, nodePortDestination(nodePort), plan.endpoints.clusterEndpoints, 0);
}

/**
 * The port's ClusterIP found by `dnat-cluster-ips` (no `service-ips` element): its elements
 * in the address map, and the rule of its protocol and endpoint count, made with the
 * first port that needs it.
 */
export function emitClusterIPDraw(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, clusterIP: IP): void {
  const { proto } = plan;
  const n = plan.endpoints.clusterEndpoints.length;
  addAddressDraws(b, ctx, plan, clusterIP);
  const made = clusterIPDraws(b);
  if (!made.has(`${proto} ${n}`)) {
    made.add(`${proto} ${n}`);
    b.rule({ chain: CLUSTER_IP_DNAT_CHAIN, stmts: [addressDnat(ctx, proto, n)] });
  }
}

/**
 * The port's endpoints as elements of the shared maps, keyed by each destination it owns,
 * and the chains its dispatch elements go to; the rules, chains and maps are made with the
 * first port that uses them.
 */
export function emitSharedDnat(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, owned: OwnedDestinations): DispatchRoute {
  const { proto } = plan;
  const n = plan.endpoints.clusterEndpoints.length;
  const names = sharedDnatNames(proto, n);
  if (owned.clusterIP) emitClusterIPDraw(b, ctx, plan, owned.clusterIP);
  const addresses = ownedExternalAddresses(owned);
  for (const ip of addresses) addAddressDraws(b, ctx, plan, ip);
  if (addresses.length > 0 && !b.hasChain(names.external)) {
    b.chain({ name: names.external });
    b.rule({ chain: names.external, stmts: [ctx.markForMasquerade] });
    b.rule({ chain: names.external, stmts: [addressDnat(ctx, proto, n)] });
  }
  if (owned.nodePort !== undefined) {
    addNodePortDraws(b, ctx, plan, owned.nodePort);
    if (!b.hasChain(names.nodePort)) {
      b.chain({ name: names.nodePort });
      b.rule({ chain: names.nodePort, stmts: [ctx.markForMasquerade] });
      b.rule({ chain: names.nodePort, stmts: [nodePortDnat(ctx, proto, n)] });
    }
  }
  return { external: names.external, nodePort: names.nodePort };
}
