// loadBalancerSourceRanges: which sources may reach a Service port's load-balancer IPs,
// as kube-proxy decides it (nftables proxier, the firewall chain). Backends differ only in
// how they drop the others.
import { cidrContains, type CIDR, type IP } from '../net/ip.js';
import type { ServicePort } from './types.js';

export type AllowedSource = { t: 'cidr'; cidr: CIDR } | { t: 'ip'; ip: IP };

/** True when the port's load-balancer IPs are firewalled by source ranges. */
export function usesFirewall(sp: ServicePort): boolean {
  return sp.loadBalancerVIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
}

/**
 * The source ranges, plus the VIPs themselves when the node's IP is inside a range: a VIP
 * that is also a local address makes the node's own requests arrive with the VIP as source.
 */
export function allowedSources(sp: ServicePort, primaryNodeIP: IP | undefined): AllowedSource[] {
  const sources: AllowedSource[] = sp.loadBalancerSourceRanges.map((cidr) => ({ t: 'cidr', cidr }));
  const allowFromNode = primaryNodeIP !== undefined && sp.loadBalancerSourceRanges.some((c) => cidrContains(c, primaryNodeIP));
  if (allowFromNode) for (const ip of sp.loadBalancerVIPs) sources.push({ t: 'ip', ip });
  return sources;
}
