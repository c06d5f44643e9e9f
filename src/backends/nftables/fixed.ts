// The table's fixed sets, maps and rules (the rest of kube-proxy's setupNFTables):
// masquerading, ClusterIP checks, NodePort addresses, no-endpoint handling, firewall and
// Service dispatch. Rule order inside each chain is kube-proxy's.
import type { FamilyModel } from '../../model/types.js';
import { concat, eq, jump, meta, ne, payload, prefix, setref, type Stmt } from '../../nft/expr.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import type { MasqueradeSets } from './dispatch.js';
import { localMatch } from './local-detector.js';
import * as N from './names.js';
import { emitSkeleton } from './skeleton.js';

/** What fast-load's services chain does besides kube-proxy's dispatch (fast-load/index.ts). */
export interface DispatchExtras {
  /**
   * A chain the services chain jumps to for ClusterIP traffic after the `service-ips` map
   * and before NodePorts: the Service ports with no dispatch element of their own are found
   * there (fast-load/shared-dnat.ts).
   */
  clusterIPDnatChain: string;
  /** The destinations whose traffic the services chain marks for masquerade before each dispatch map. */
  masqueradeSets: MasqueradeSets;
}

/** kube-proxy's fixed part, in its order: the skeleton, then the fixed sets, maps and rules; and fast-load's `extras`. */
export function emitKubeProxyFixedPart(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, extras?: DispatchExtras): void {
  // 1.36 on: the hairpin set is the table's first (as a live table lists it).
  if (ctx.forms.hairpin === 'set') emitHairpinSet(b, ctx);
  emitSkeleton(b, ctx.forms);
  if (ctx.forms.markChain) emitMasquerading(b, ctx);
  else emitInlineMasquerading(b, ctx);
  emitClusterIPChecks(b, ctx, m);
  emitNodePortAddresses(b, ctx, m);
  emitNoEndpointHandling(b, ctx, m);
  emitFirewallCheck(b, ctx);
  emitServiceDispatch(b, ctx, m, extras);
}

const l4protoDport = () => concat(meta('l4proto'), payload('th', 'dport'));
const serviceKey = (ctx: FamilyContext) => concat(ctx.daddr, meta('l4proto'), payload('th', 'dport'));

export function emitMasquerading(b: TableBuilder, ctx: FamilyContext): void {
  const mark = ctx.masqueradeMark;
  b.rule({ chain: N.MARK_MASQ_CHAIN, stmts: [{ t: 'mark-set', op: 'or', value: mark }] });
  // Unmarked connections are left alone; the mark is cleared so that it does not leak
  // into anything else that looks at it, then the connection is masqueraded.
  b.rule({
    chain: N.MASQUERADING_CHAIN,
    stmts: [{ t: 'match', left: { t: 'and', left: meta('mark'), mask: mark }, op: '==', right: { t: 'num', n: 0 } }, { t: 'verdict', v: { kind: 'return' } }],
  });
  b.rule({ chain: N.MASQUERADING_CHAIN, stmts: [{ t: 'mark-set', op: 'xor', value: mark }] });
  b.rule({ chain: N.MASQUERADING_CHAIN, stmts: [{ t: 'masquerade', fullyRandom: true }] });
}

/**
 * 1.36 on: the mark is tested, cleared and acted on in one rule (no mark-for-masquerade
 * chain); and a connection an endpoint made to its own Service is masqueraded after DNAT,
 * found in the hairpin set, so that the reply goes back through the DNAT.
 */
function emitInlineMasquerading(b: TableBuilder, ctx: FamilyContext): void {
  const mark = ctx.masqueradeMark;
  b.rule({
    chain: N.MASQUERADING_CHAIN,
    stmts: [
      { t: 'match', left: { t: 'and', left: meta('mark'), mask: mark }, op: '!=', right: { t: 'num', n: 0 } },
      { t: 'mark-set', op: 'xor', value: mark },
      { t: 'masquerade', fullyRandom: true },
    ],
  });
  b.rule({
    chain: N.MASQUERADING_CHAIN,
    stmts: [
      eq({ t: 'ct', key: 'status' }, { t: 'sym', s: 'dnat' }),
      eq(concat(ctx.saddr, ctx.daddr, meta('l4proto'), payload('th', 'dport')), setref(N.HAIRPIN_SET)),
      { t: 'masquerade', fullyRandom: true },
    ],
  });
}

/** 1.36 on: each endpoint on this node, as the connection it makes to itself through a Service: EP . EP . protocol . port. */
function emitHairpinSet(b: TableBuilder, ctx: FamilyContext): void {
  b.set({
    name: N.HAIRPIN_SET,
    kind: 'set',
    keyType: [ctx.addrType, ctx.addrType, 'inet_proto', 'inet_service'],
    comment: 'service hairpin connections',
  });
}

/**
 * 1.36 on: ClusterIP traffic from outside the cluster is marked for masquerade by one rule
 * for every ClusterIP, where each Service chain had its own up to 1.35 (it may have been
 * routed to this node by a static route for the Service range and leave to another node).
 */
function emitClusterIPMasquerade(b: TableBuilder, ctx: FamilyContext, m: FamilyModel): void {
  const notLocal = localMatch(ctx, m.localDetector, false);
  if (!m.masqueradeAll && !notLocal) return;
  b.rule({
    chain: N.SERVICES_CHAIN,
    stmts: [eq(ctx.daddr, setref(N.CLUSTER_IPS_SET)), ...(m.masqueradeAll || !notLocal ? [] : [notLocal]), ctx.markForMasquerade],
    comment: 'masquerade clusterIP traffic from outside cluster',
  });
}

export function emitClusterIPChecks(b: TableBuilder, ctx: FamilyContext, m: FamilyModel): void {
  b.set({ name: N.CLUSTER_IPS_SET, kind: 'set', keyType: [ctx.addrType], comment: 'Active ClusterIPs' });
  b.rule({
    chain: N.CLUSTER_IPS_CHECK_CHAIN,
    stmts: [eq(ctx.daddr, setref(N.CLUSTER_IPS_SET)), { t: 'reject' }],
    comment: 'Reject traffic to invalid ports of ClusterIPs',
  });
  if (m.serviceCIDRs.length > 0) {
    b.rule({
      chain: N.CLUSTER_IPS_CHECK_CHAIN,
      stmts: [eq(ctx.daddr, { t: 'anonset', items: m.serviceCIDRs.map(prefix) }), { t: 'verdict', v: { kind: 'drop' } }],
      comment: 'Drop traffic to unallocated ClusterIPs',
    });
  }
}

export function emitNodePortAddresses(b: TableBuilder, ctx: FamilyContext, m: FamilyModel): void {
  if (m.nodePortAddresses.matchAll) return;
  b.set({ name: N.NODEPORT_IPS_SET, kind: 'set', keyType: [ctx.addrType], comment: 'IPs that accept NodePort traffic' });
  for (const ip of m.nodePortAddresses.ips) b.element({ set: N.NODEPORT_IPS_SET, key: [{ t: 'ip', ip }] });
}

/** With every local address accepting NodePorts, "local" is any but loopback. */
function nodePortDestination(ctx: FamilyContext, m: FamilyModel, withFib: boolean): Stmt[] {
  if (m.nodePortAddresses.matchAll) {
    const notLocalhost = ne(ctx.daddr, ctx.notLocalhost);
    return withFib
      ? [eq({ t: 'fib', flag: 'daddr', result: 'type' }, { t: 'sym', s: 'local' }), notLocalhost]
      : [notLocalhost];
  }
  return [eq(ctx.daddr, setref(N.NODEPORT_IPS_SET))];
}

export function emitNoEndpointHandling(b: TableBuilder, ctx: FamilyContext, m: FamilyModel): void {
  b.set({
    name: N.NO_ENDPOINT_SERVICES_MAP,
    kind: 'map',
    keyType: [ctx.addrType, 'inet_proto', 'inet_service'],
    comment: 'vmap to drop or reject packets to services with no endpoints',
  });
  b.set({
    name: N.NO_ENDPOINT_NODEPORTS_MAP,
    kind: 'map',
    keyType: ['inet_proto', 'inet_service'],
    comment: 'vmap to drop or reject packets to service nodeports with no endpoints',
  });
  b.chain({ name: N.REJECT_CHAIN, comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports' });
  b.rule({ chain: N.REJECT_CHAIN, stmts: [{ t: 'reject' }] });
  b.rule({ chain: N.SERVICE_ENDPOINTS_CHECK_CHAIN, stmts: [{ t: 'vmap', key: serviceKey(ctx), map: N.NO_ENDPOINT_SERVICES_MAP }] });
  b.rule({
    chain: N.NODEPORT_ENDPOINTS_CHECK_CHAIN,
    stmts: [...nodePortDestination(ctx, m, false), { t: 'vmap', key: l4protoDport(), map: N.NO_ENDPOINT_NODEPORTS_MAP }],
  });
}

export function emitFirewallCheck(b: TableBuilder, ctx: FamilyContext): void {
  b.set({
    name: N.FIREWALL_IPS_MAP,
    kind: 'map',
    keyType: [ctx.addrType, 'inet_proto', 'inet_service'],
    comment: 'destinations that are subject to LoadBalancerSourceRanges',
  });
  b.chain({ name: N.FIREWALL_CHECK_CHAIN });
  b.rule({ chain: N.FIREWALL_CHECK_CHAIN, stmts: [{ t: 'vmap', key: serviceKey(ctx), map: N.FIREWALL_IPS_MAP }] });
}

export function emitServiceDispatch(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, extras?: DispatchExtras): void {
  b.set({
    name: N.SERVICE_IPS_MAP,
    kind: 'map',
    keyType: [ctx.addrType, 'inet_proto', 'inet_service'],
    comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic',
  });
  b.set({ name: N.SERVICE_NODEPORTS_MAP, kind: 'map', keyType: ['inet_proto', 'inet_service'], comment: 'NodePort traffic' });
  if (ctx.forms.clusterIPMasquerade === 'services-chain') emitClusterIPMasquerade(b, ctx, m);
  const masquerade = extras?.masqueradeSets;
  if (masquerade) {
    b.set({ name: masquerade.addresses, kind: 'set', keyType: [ctx.addrType, 'inet_proto', 'inet_service'], comment: 'external and load-balancer IPs marked for masquerade' });
    b.set({ name: masquerade.nodePorts, kind: 'set', keyType: ['inet_proto', 'inet_service'], comment: 'NodePorts marked for masquerade' });
    b.rule({ chain: N.SERVICES_CHAIN, stmts: [eq(serviceKey(ctx), setref(masquerade.addresses)), ctx.markForMasquerade] });
  }
  b.rule({ chain: N.SERVICES_CHAIN, stmts: [{ t: 'vmap', key: serviceKey(ctx), map: N.SERVICE_IPS_MAP }] });
  if (extras) {
    b.chain({ name: extras.clusterIPDnatChain });
    b.rule({ chain: N.SERVICES_CHAIN, stmts: [eq(ctx.daddr, setref(N.CLUSTER_IPS_SET)), jump(extras.clusterIPDnatChain)] });
  }
  // A packet reaches the NodePorts' rules only when no rule before has DNATed it (a DNAT
  // ends the chain), so the mark falls on what the NodePort map dispatches.
  const nodePortTo = nodePortDestination(ctx, m, true);
  if (masquerade) b.rule({ chain: N.SERVICES_CHAIN, stmts: [...nodePortTo, eq(l4protoDport(), setref(masquerade.nodePorts)), ctx.markForMasquerade] });
  b.rule({ chain: N.SERVICES_CHAIN, stmts: [...nodePortTo, { t: 'vmap', key: l4protoDport(), map: N.SERVICE_NODEPORTS_MAP }] });
}
