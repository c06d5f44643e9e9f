// The fixed part of the table: base chains and the jumps into our regular chains, as
// data rows with the reason beside each (kube-proxy's nftablesBaseChains/JumpChains).
import { ctStateNew, jump, type Stmt } from '../../nft/expr.js';
import type { BaseChainSpec } from '../../nft/objects.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import * as N from './names.js';
import type { TableForms } from './versions.js';

// Numeric priorities: nft before 1.0.9 refuses "dstnat" outside prerouting.
const DSTNAT = -100;
const SRCNAT = 100;

/** Filter chains run before DNAT (dstnat - 10) so they see the Service IP, not the endpoint. */
export const BASE_CHAINS: { name: string; spec: BaseChainSpec }[] = [
  { name: N.FILTER_PREROUTING, spec: { type: 'filter', hook: 'prerouting', priority: DSTNAT - 10 } },
  { name: N.FILTER_INPUT, spec: { type: 'filter', hook: 'input', priority: DSTNAT - 10 } },
  { name: N.FILTER_FORWARD, spec: { type: 'filter', hook: 'forward', priority: DSTNAT - 10 } },
  { name: N.FILTER_OUTPUT, spec: { type: 'filter', hook: 'output', priority: DSTNAT - 10 } },
  // After DNAT on output, so that only traffic DNAT did not claim reaches cluster-ips-check.
  { name: N.FILTER_OUTPUT_POST_DNAT, spec: { type: 'filter', hook: 'output', priority: DSTNAT + 10 } },
  { name: N.NAT_PREROUTING, spec: { type: 'nat', hook: 'prerouting', priority: DSTNAT } },
  { name: N.NAT_OUTPUT, spec: { type: 'nat', hook: 'output', priority: DSTNAT } },
  { name: N.NAT_POSTROUTING, spec: { type: 'nat', hook: 'postrouting', priority: SRCNAT } },
];

/** Jumps from base chains, in kube-proxy's order (rule order within a chain matters). */
export const JUMP_CHAINS: { to: string; from: string; newOnly: boolean; why: string }[] = [
  // Rejects are only valid in input/forward/output on kernels before 5.9, so the
  // endpoint checks cannot hang off prerouting.
  { to: N.NODEPORT_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_INPUT, newOnly: true, why: 'NodePorts without endpoints' },
  { to: N.SERVICE_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_INPUT, newOnly: true, why: 'Service IPs without endpoints, to the node' },
  { to: N.SERVICE_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_FORWARD, newOnly: true, why: 'Service IPs without endpoints, routed' },
  { to: N.SERVICE_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_OUTPUT, newOnly: true, why: 'Service IPs without endpoints, from the node' },
  { to: N.FIREWALL_CHECK_CHAIN, from: N.FILTER_PREROUTING, newOnly: true, why: 'loadBalancerSourceRanges, before DNAT' },
  { to: N.FIREWALL_CHECK_CHAIN, from: N.FILTER_OUTPUT, newOnly: true, why: 'loadBalancerSourceRanges, from the node' },
  { to: N.SERVICES_CHAIN, from: N.NAT_OUTPUT, newOnly: false, why: 'Service dispatch for the node itself' },
  { to: N.SERVICES_CHAIN, from: N.NAT_PREROUTING, newOnly: false, why: 'Service dispatch for arriving traffic' },
  { to: N.MASQUERADING_CHAIN, from: N.NAT_POSTROUTING, newOnly: false, why: 'SNAT of marked connections' },
  { to: N.CLUSTER_IPS_CHECK_CHAIN, from: N.FILTER_FORWARD, newOnly: true, why: 'bad ClusterIPs or ports, routed' },
  { to: N.CLUSTER_IPS_CHECK_CHAIN, from: N.FILTER_OUTPUT_POST_DNAT, newOnly: true, why: 'bad ClusterIPs or ports, from the node' },
];

/** Regular chains every table has, besides the jump targets (mark-for-masquerade up to 1.35). */
export const TOP_LEVEL_CHAINS = [N.SERVICES_CHAIN, N.CLUSTER_IPS_CHECK_CHAIN, N.MASQUERADING_CHAIN, N.MARK_MASQ_CHAIN];

export function emitSkeleton(b: TableBuilder, forms: TableForms): void {
  for (const bc of BASE_CHAINS) b.chain({ name: bc.name, base: bc.spec });
  for (const j of JUMP_CHAINS) {
    b.chain({ name: j.to });
    const stmts: Stmt[] = j.newOnly ? [ctStateNew, jump(j.to)] : [jump(j.to)];
    b.rule({ chain: j.from, stmts });
  }
  for (const name of TOP_LEVEL_CHAINS) if (name !== N.MARK_MASQ_CHAIN || forms.markChain) b.chain({ name });
}
