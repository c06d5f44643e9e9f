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

function protoPart(plan: ServicePortPlan): KeyPart {
  return { t: 'proto', name: plan.proto };
}

export function emitDispatch(b: TableBuilder, plan: ServicePortPlan, claims: Claims, onConflict: ElementConflictHandler): void {
  const { sp } = plan;
  const externalIPs = sp.externalIPs.filter((ip) => claims.owns(sp, 'external IP', ip));
  const loadBalancerVIPs = sp.loadBalancerVIPs.filter((ip) => claims.owns(sp, 'load-balancer IP', ip));
  const ipKey = (ip: IP): KeyPart[] => [{ t: 'ip', ip }, protoPart(plan), { t: 'port', n: sp.port }];
  const add = (set: string, key: KeyPart[], value?: Verdict, comment?: string) => {
    if (!b.element({ set, key, value, comment })) onConflict(plan, set, key);
  };
  const toExternal: Verdict = { kind: 'goto', target: plan.chains.external };

  b.element({ set: N.CLUSTER_IPS_SET, key: [{ t: 'ip', ip: sp.clusterIP }] });
  if (claims.owns(sp, 'ClusterIP', sp.clusterIP)) {
    if (plan.hasInternalEndpoints) add(N.SERVICE_IPS_MAP, ipKey(sp.clusterIP), { kind: 'goto', target: plan.internalChain });
    else add(N.NO_ENDPOINT_SERVICES_MAP, ipKey(sp.clusterIP), plan.internalFilterVerdict, plan.nameString);
  }

  for (const ip of externalIPs) {
    if (plan.endpoints.hasAnyEndpoints) add(N.SERVICE_IPS_MAP, ipKey(ip), toExternal);
    // No endpoints at all (reject), or none for external traffic (drop what the external
    // chain did not short-circuit).
    if (!plan.hasExternalEndpoints) add(N.NO_ENDPOINT_SERVICES_MAP, ipKey(ip), plan.externalFilterVerdict, plan.nameString);
  }

  for (const ip of loadBalancerVIPs) {
    if (plan.endpoints.hasAnyEndpoints) add(N.SERVICE_IPS_MAP, ipKey(ip), toExternal);
    if (plan.usesFirewall) {
      add(N.FIREWALL_IPS_MAP, ipKey(ip), { kind: 'goto', target: plan.chains.firewall }, plan.nameString);
    }
  }
  if (!plan.hasExternalEndpoints) {
    for (const ip of loadBalancerVIPs) add(N.NO_ENDPOINT_SERVICES_MAP, ipKey(ip), plan.externalFilterVerdict, plan.nameString);
  }

  if (sp.nodePort !== 0 && claims.owns(sp, 'NodePort')) {
    const key: KeyPart[] = [protoPart(plan), { t: 'port', n: sp.nodePort }];
    // NodePorts are not subject to loadBalancerSourceRanges (kube-proxy cannot change that).
    if (plan.endpoints.hasAnyEndpoints) add(N.SERVICE_NODEPORTS_MAP, key, toExternal);
    if (!plan.hasExternalEndpoints) add(N.NO_ENDPOINT_NODEPORTS_MAP, key, plan.externalFilterVerdict, plan.nameString);
  }
}
