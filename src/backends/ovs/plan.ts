// Decide, then emit: which select groups one Service port needs, which endpoints each
// holds, and which group serves which traffic, as Antrea v1.12's proxier decides it
// (installServices). Endpoint choice itself is the shared categorisation.
import { categorizeEndpoints, externallyAccessible } from '../../model/categorize.js';
import { allowedSources, usesFirewall, type AllowedSource } from '../../model/firewall.js';
import { servicePortKey, type Endpoint, type FamilyModel, type ServicePort } from '../../model/types.js';
import { allocateGroupIDs } from './group-ids.js';

/** hard_timeout is 16 bits in OpenFlow; Kubernetes allows up to 86400 seconds. */
export const MAX_AFFINITY_TIMEOUT = 65535;

export interface GroupPlan {
  /** Derived from `key` (group-ids.ts); set once every Service port of the family is planned. */
  id: number;
  /** What the group serves: the Service port and `local` or `cluster`. */
  key: string;
  /** Empty: the group's one bucket marks the packet "no endpoint" (reject). */
  endpoints: Endpoint[];
}

export interface ServicePortPlan {
  sp: ServicePort;
  /** ClusterIP traffic: local endpoints when internalTrafficPolicy is Local. */
  internal: GroupPlan;
  /** NodePort, external IPs, load-balancer IPs: local endpoints when externalTrafficPolicy is Local. */
  external?: GroupPlan;
  /** All cluster endpoints: where local Pods' external traffic is short-circuited. */
  cluster?: GroupPlan;
  /** Distinct groups in ID order. */
  groups: GroupPlan[];
  /** Every endpoint some group may select: each needs its DNAT flow. */
  reachable: Endpoint[];
  /** Learned-flow hard_timeout, capped; undefined without ClientIP affinity. */
  affinityTimeout?: number;
  /** Allowed sources of load-balancer IPs; undefined when the port has no source ranges. */
  allowedSources?: AllowedSource[];
}

/**
 * Antrea keeps at most two groups per Service port, one of all cluster endpoints and one
 * of local endpoints; the policies pick which serves internal and external traffic.
 */
export function planServicePort(sp: ServicePort, m: FamilyModel): ServicePortPlan {
  const cat = categorizeEndpoints(m.endpoints.get(servicePortKey(sp.id)) ?? [], sp, m.nodeName, m.nodeLabels);
  const made: { local?: GroupPlan; cluster?: GroupPlan } = {};
  const group = (local: boolean): GroupPlan => {
    const role = local ? 'local' : 'cluster';
    made[role] ??= { id: 0, key: `${servicePortKey(sp.id)}/${role}`, endpoints: local ? cat.localEndpoints : cat.clusterEndpoints };
    return made[role]!;
  };

  const internal = group(sp.internalPolicyLocal);
  let external: GroupPlan | undefined;
  let cluster: GroupPlan | undefined;
  if (externallyAccessible(sp)) {
    external = group(sp.externalPolicyLocal);
    cluster = group(false);
  }
  return {
    sp,
    internal,
    external,
    cluster,
    groups: [made.local, made.cluster].filter((g): g is GroupPlan => g !== undefined),
    reachable: cat.allReachableEndpoints,
    affinityTimeout: sp.affinityTimeout === undefined ? undefined : Math.min(sp.affinityTimeout, MAX_AFFINITY_TIMEOUT),
    allowedSources: usesFirewall(sp) ? allowedSources(sp, m.primaryNodeIP) : undefined,
  };
}

/** Every Service port of one family, group IDs given in the model's sorted order. */
export function planFamily(m: FamilyModel): ServicePortPlan[] {
  const plans = m.servicePorts.map((sp) => planServicePort(sp, m));
  const groups = plans.flatMap((p) => p.groups);
  const ids = allocateGroupIDs(m.family, groups.map((g) => g.key));
  groups.forEach((g, i) => (g.id = ids[i]));
  for (const p of plans) p.groups.sort((a, b) => a.id - b.id);
  return plans;
}
