// The map elements that send a Service port's addresses to its chains, or to the
// no-endpoint verdict: ClusterIP, external IPs, load-balancer IPs and the NodePort. A
// destination another Service port owns (claims.ts) gets none of this port's elements.
import type { IP } from '../../net/ip.js';
import type { Claims } from '../claims.js';
import type { Verdict } from '../../nft/expr.js';
import type { KeyPart } from '../../nft/objects.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import * as N from './names.js';
import type { ServicePortPlan } from './plan.js';

export type ElementConflictHandler = (plan: ServicePortPlan, set: string, key: KeyPart[]) => void;

/** The destinations of a Service port that are its own (claims.ts): what its dispatch elements are keyed by. */
export interface OwnedDestinations {
  clusterIP?: IP;
  externalIPs: IP[];
  loadBalancerVIPs: IP[];
  nodePort?: number;
}

/** The external and load-balancer IPs the port owns: the addresses its external traffic comes to. */
export const ownedExternalAddresses = (owned: OwnedDestinations): IP[] => [...owned.externalIPs, ...owned.loadBalancerVIPs];

/** The owned addresses a Service port is reached on besides its NodePort: ClusterIP, external IPs, load-balancer IPs. */
export const ownedAddresses = (owned: OwnedDestinations): IP[] => [...(owned.clusterIP ? [owned.clusterIP] : []), ...ownedExternalAddresses(owned)];

export function ownedDestinations(plan: ServicePortPlan, claims: Claims): OwnedDestinations {
  const { sp } = plan;
  return {
    clusterIP: claims.owns(sp, 'ClusterIP', sp.clusterIP) ? sp.clusterIP : undefined,
    externalIPs: sp.externalIPs.filter((ip) => claims.owns(sp, 'external IP', ip)),
    loadBalancerVIPs: sp.loadBalancerVIPs.filter((ip) => claims.owns(sp, 'load-balancer IP', ip)),
    nodePort: sp.nodePort !== 0 && claims.owns(sp, 'NodePort') ? sp.nodePort : undefined,
  };
}

/**
 * Where a Service port's traffic is sent: ClusterIP traffic to `internal`, traffic to its
 * external and load-balancer IPs to `external`, NodePort traffic to `nodePort`. kube-proxy's
 * are the port's own chains (its policy chain, its external chain for both: policy.ts);
 * fast-load's chains shared by many Service ports are others, and its ClusterIP traffic has
 * no element at all when the table's own rules find its endpoints (fast-load/shared-dnat.ts).
 */
export interface DispatchRoute {
  /** Undefined: no `service-ips` element for the ClusterIP. */
  internal?: string;
  external: string;
  nodePort: string;
  /** Where its load-balancer IPs' `firewall-ips` elements go, when it has source ranges. */
  firewall?: string;
  /**
   * The sets its external destinations join for the services chain to mark their traffic
   * for masquerade, when no external chain of its own does (fast-load: MasqueradeSets).
   */
  masquerade?: MasqueradeSets;
}

/**
 * fast-load's sets of the destinations whose traffic the services chain marks for
 * masquerade before dispatching it: the external and load-balancer IPs (address .
 * protocol . port) and the NodePorts (protocol . port) of Service ports with Cluster
 * external policy, in place of each port's external chain (`mark`, `goto` its policy chain).
 */
export interface MasqueradeSets {
  addresses: string;
  nodePorts: string;
}

function protoPart(plan: ServicePortPlan): KeyPart {
  return { t: 'proto', name: plan.proto };
}

export function emitDispatch(b: TableBuilder, plan: ServicePortPlan, owned: OwnedDestinations, route: DispatchRoute, onConflict: ElementConflictHandler): void {
  const { sp } = plan;
  const ipKey = (ip: IP): KeyPart[] => [{ t: 'ip', ip }, protoPart(plan), { t: 'port', n: sp.port }];
  const add = (set: string, key: KeyPart[], value?: Verdict, comment?: string) => {
    if (!b.element({ set, key, value, comment })) onConflict(plan, set, key);
  };
  const toExternal: Verdict = { kind: 'goto', target: route.external };

  b.element({ set: N.CLUSTER_IPS_SET, key: [{ t: 'ip', ip: sp.clusterIP }] });
  if (owned.clusterIP) {
    if (!plan.hasInternalEndpoints) add(N.NO_ENDPOINT_SERVICES_MAP, ipKey(owned.clusterIP), plan.internalFilterVerdict, plan.nameString);
    else if (route.internal !== undefined) add(N.SERVICE_IPS_MAP, ipKey(owned.clusterIP), { kind: 'goto', target: route.internal });
  }

  // Each destination has one owner, so a member is written once.
  const marked = (set: string | undefined, key: KeyPart[]) => {
    if (set !== undefined) b.element({ set, key });
  };
  const toExternalChains = (key: KeyPart[]) => {
    add(N.SERVICE_IPS_MAP, key, toExternal);
    marked(route.masquerade?.addresses, key);
  };

  for (const ip of owned.externalIPs) {
    if (plan.endpoints.hasAnyEndpoints) toExternalChains(ipKey(ip));
    // No endpoints at all (reject), or none for external traffic (drop what the external
    // chain did not short-circuit).
    if (!plan.hasExternalEndpoints) add(N.NO_ENDPOINT_SERVICES_MAP, ipKey(ip), plan.externalFilterVerdict, plan.nameString);
  }

  for (const ip of owned.loadBalancerVIPs) {
    if (plan.endpoints.hasAnyEndpoints) toExternalChains(ipKey(ip));
    if (route.firewall !== undefined) add(N.FIREWALL_IPS_MAP, ipKey(ip), { kind: 'goto', target: route.firewall }, plan.nameString);
  }
  if (!plan.hasExternalEndpoints) {
    for (const ip of owned.loadBalancerVIPs) add(N.NO_ENDPOINT_SERVICES_MAP, ipKey(ip), plan.externalFilterVerdict, plan.nameString);
  }

  if (owned.nodePort !== undefined) {
    const key: KeyPart[] = [protoPart(plan), { t: 'port', n: owned.nodePort }];
    // NodePorts are not subject to loadBalancerSourceRanges (kube-proxy cannot change that).
    if (plan.endpoints.hasAnyEndpoints) {
      add(N.SERVICE_NODEPORTS_MAP, key, { kind: 'goto', target: route.nodePort });
      marked(route.masquerade?.nodePorts, key);
    }
    if (!plan.hasExternalEndpoints) add(N.NO_ENDPOINT_NODEPORTS_MAP, key, plan.externalFilterVerdict, plan.nameString);
  }
}
