// Decide, then emit: what one Service port needs in the table, as a pure value. The
// emitters translate it without making further decisions. (kube-proxy computes the same
// in syncProxyRules' local booleans.)
import { categorizeEndpoints, externallyAccessible, usesClusterEndpoints, usesLocalEndpoints, type Categorized } from '../../model/categorize.js';
import { allowedSources, usesFirewall, type AllowedSource } from '../../model/firewall.js';
import { servicePortKey, servicePortNameString, type Endpoint, type FamilyModel, type ServicePort } from '../../model/types.js';
import { eq, meta, type Stmt, type Verdict } from '../../nft/expr.js';

export type L4Proto = 'tcp' | 'udp' | 'sctp';

/** A Service port's protocol as nft names it. */
export const l4Proto = (sp: ServicePort): L4Proto => sp.id.protocol.toLowerCase() as L4Proto;
import { endpointNamer, REJECT_CHAIN, servicePortChains, type EndpointNames, type ServicePortChains } from './names.js';

export interface ServicePortPlan {
  sp: ServicePort;
  /** The protocol as nft names it. */
  proto: L4Proto;
  /** `meta l4proto PROTO`, which a DNAT with a port needs before it. */
  l4protoIs: Stmt;
  chains: ServicePortChains;
  /** "ns/name:port", the comment on no-endpoint and firewall elements (cut to COMMENT_MAX). */
  nameString: string;
  endpoints: Categorized;
  usesClusterPolicyChain: boolean;
  usesLocalPolicyChain: boolean;
  /** Where ClusterIP traffic goes; only meaningful with hasInternalEndpoints. */
  internalChain: string;
  hasInternalEndpoints: boolean;
  /** Where external traffic goes after the external chain's special cases. */
  externalPolicyChain: string;
  hasExternalEndpoints: boolean;
  usesExternalChain: boolean;
  /** Verdict in the no-endpoint maps: reject with no endpoints at all, drop with none local. */
  internalFilterVerdict?: Verdict;
  externalFilterVerdict?: Verdict;
  usesFirewall: boolean;
  /** Allowed sources for load-balancer IPs (source ranges, plus the VIPs when the node is inside). */
  firewallSources: AllowedSource[];
  /**
   * The chain and affinity set names of endpoints (all of them endpoints of this Service
   * port), in their order: each endpoint's hashed once however often it is used.
   */
  endpointNames(endpoints: Endpoint[]): EndpointNames[];
}

/**
 * nft refuses a comment of more than 128 characters ("comment too long", nft 1.0.6), and a
 * valid namespace, Service name and port name (63 each) make 191; the comment is only a
 * label, so it is cut rather than failing the whole ruleset.
 */
export const COMMENT_MAX = 128;

export function planServicePort(sp: ServicePort, m: FamilyModel): ServicePortPlan {
  const chains = servicePortChains(sp.id);
  const endpoints = categorizeEndpoints(m.endpoints.get(servicePortKey(sp.id)) ?? [], sp, m.nodeName, m.nodeLabels);
  const hasEndpoints = endpoints.hasAnyEndpoints;
  const usesClusterPolicyChain = endpoints.clusterEndpoints.length > 0 && usesClusterEndpoints(sp);
  const usesLocalPolicyChain = endpoints.localEndpoints.length > 0 && usesLocalEndpoints(sp);

  const internalChain = sp.internalPolicyLocal ? chains.localPolicy : chains.clusterPolicy;
  const hasInternalEndpoints = hasEndpoints && !(sp.internalPolicyLocal && endpoints.localEndpoints.length === 0);
  const externalPolicyChain = sp.externalPolicyLocal ? chains.localPolicy : chains.clusterPolicy;
  const hasExternalEndpoints = hasEndpoints && !(sp.externalPolicyLocal && endpoints.localEndpoints.length === 0);
  // Based on hasEndpoints, not hasExternalEndpoints: the short-circuit rules for local
  // traffic are needed even when no endpoint serves external traffic.
  const usesExternalChain = hasEndpoints && externallyAccessible(sp);

  let internalFilterVerdict: Verdict | undefined;
  let externalFilterVerdict: Verdict | undefined;
  if (!hasEndpoints) {
    internalFilterVerdict = { kind: 'goto', target: REJECT_CHAIN };
    externalFilterVerdict = { kind: 'goto', target: REJECT_CHAIN };
  } else {
    if (!hasInternalEndpoints) internalFilterVerdict = { kind: 'drop' };
    if (!hasExternalEndpoints) externalFilterVerdict = { kind: 'drop' };
  }

  const proto = l4Proto(sp);
  return {
    sp,
    proto,
    l4protoIs: eq(meta('l4proto'), { t: 'sym', s: proto }),
    chains,
    nameString: servicePortNameString(sp.id).slice(0, COMMENT_MAX),
    endpoints,
    usesClusterPolicyChain,
    usesLocalPolicyChain,
    internalChain,
    hasInternalEndpoints,
    externalPolicyChain,
    hasExternalEndpoints,
    usesExternalChain,
    internalFilterVerdict,
    externalFilterVerdict,
    usesFirewall: usesFirewall(sp),
    firewallSources: allowedSources(sp, m.primaryNodeIP),
    endpointNames: memoNames(sp, endpoints.allReachableEndpoints),
  };
}

function memoNames(sp: ServicePort, reachable: Endpoint[]): (endpoints: Endpoint[]) => EndpointNames[] {
  const namer = endpointNamer(sp.id);
  let names: EndpointNames[] | undefined; // of the reachable endpoints, in their order
  let byEndpoint: Map<Endpoint, EndpointNames> | undefined;
  const reachableNames = () => (names ??= reachable.map(namer));
  return (endpoints) => {
    // Usually the endpoints asked for are the reachable ones, the very array: no lookups.
    if (endpoints === reachable) return reachableNames();
    const known = (byEndpoint ??= new Map(reachableNames().map((n, i) => [reachable[i], n])));
    return endpoints.map((ep) => {
      let n = known.get(ep);
      if (!n) known.set(ep, (n = namer(ep)));
      return n;
    });
  };
}
