// Which endpoints serve which traffic: kube-proxy's CategorizeEndpoints (pkg/proxy/topology.go).
import type { Endpoint, ServicePort } from './types.js';

export interface Categorized {
  clusterEndpoints: Endpoint[];
  localEndpoints: Endpoint[];
  allReachableEndpoints: Endpoint[];
  hasAnyEndpoints: boolean;
}

export function externallyAccessible(sp: ServicePort): boolean {
  return sp.nodePort !== 0 || sp.loadBalancerVIPs.length > 0 || sp.externalIPs.length > 0;
}

/** Cluster endpoints are needed for internal Cluster policy, and for any external traffic
 * (even with external Local policy, for the short-circuit of local Pods). */
export function usesClusterEndpoints(sp: ServicePort): boolean {
  return !sp.internalPolicyLocal || externallyAccessible(sp);
}

export function usesLocalEndpoints(sp: ServicePort): boolean {
  return sp.internalPolicyLocal || (sp.externalPolicyLocal && externallyAccessible(sp));
}

const ZONE_LABEL = 'topology.kubernetes.io/zone';

/**
 * Topology: hints are used when every ready endpoint carries them and at least one names
 * this node (forNodes, PreferSameNode) or this node's zone (forZones). Node hints win.
 */
export function topologyFilter(
  endpoints: Endpoint[],
  sp: ServicePort,
  nodeName: string,
  nodeLabels: Record<string, string>,
): ((ep: Endpoint) => boolean) | null {
  if (sp.topologyDisabled) return null;
  const zone = nodeLabels[ZONE_LABEL] ?? '';
  let allNode = true;
  let forNode = false;
  let allZone = true;
  let forZone = false;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    if (!ep.nodeHints || ep.nodeHints.size === 0) allNode = false;
    else if (ep.nodeHints.has(nodeName)) forNode = true;
    if (!ep.zoneHints || ep.zoneHints.size === 0) allZone = false;
    else if (ep.zoneHints.has(zone)) forZone = true;
    // Neither kind of hint on every endpoint: no filter, whatever the rest hold.
    if (!allNode && !allZone) return null;
  }
  if (allNode && forNode) return (ep) => ep.nodeHints?.has(nodeName) ?? false;
  if (zone !== '' && allZone && forZone) return (ep) => ep.zoneHints?.has(zone) ?? false;
  return null;
}

export function categorizeEndpoints(
  endpoints: Endpoint[],
  sp: ServicePort,
  nodeName: string,
  nodeLabels: Record<string, string>,
): Categorized {
  let clusterEndpoints: Endpoint[] = [];
  let localEndpoints: Endpoint[] = [];
  let hasAnyEndpoints = false;
  let useTopology = false;
  let useServingTerminating = false;

  if (usesClusterEndpoints(sp)) {
    const topo = topologyFilter(endpoints, sp, nodeName, nodeLabels);
    useTopology = topo !== null;
    clusterEndpoints = endpoints.filter((ep) => ep.ready && (!topo || topo(ep)));
    // No ready endpoint anywhere: fall back to serving-and-terminating ones, without
    // topology (a best effort not to drop connections).
    if (clusterEndpoints.length === 0) clusterEndpoints = endpoints.filter((ep) => ep.serving && ep.terminating);
    if (clusterEndpoints.length > 0) hasAnyEndpoints = true;
  }

  if (!usesLocalEndpoints(sp)) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: clusterEndpoints, hasAnyEndpoints };
  }

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of endpoints) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (ep.serving && ep.terminating) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }
  if (hasLocalReady) localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.ready);
  else if (hasLocalServingTerminating) {
    useServingTerminating = true;
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.serving && ep.terminating);
  }

  if (!usesClusterEndpoints(sp)) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: localEndpoints, hasAnyEndpoints };
  }
  if (!useTopology && !useServingTerminating) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: clusterEndpoints, hasAnyEndpoints };
  }
  // Local endpoints may be terminating or outside the topology, so merge the two lists.
  const merged = new Map<string, Endpoint>();
  for (const ep of [...clusterEndpoints, ...localEndpoints]) merged.set(ep.key, ep);
  const allReachableEndpoints = [...merged.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints };
}
