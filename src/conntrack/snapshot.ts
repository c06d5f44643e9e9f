// The new snapshot as the conntrack clean-up needs it: each UDP Service port's addresses
// and NodePort (those it owns, as the rules give them) and the addresses of its serving
// endpoints.
import { resolveClaims } from '../backends/claims.js';
import type { IP, IPFamily } from '../net/ip.js';
import { servicePortKey, servicePortNameString, type FamilyModel } from '../model/types.js';

/** One UDP Service port of the new snapshot, in one IP family. */
export interface ConntrackServicePort {
  family: IPFamily;
  /** "namespace/name:port" as the script's comments name it. */
  name: string;
  /** The ClusterIP, external IPs and load-balancer IPs it owns (one Service port per address and port). */
  addresses: IP[];
  port: number;
  /** 0 when it has none, or another Service port owns it. */
  nodePort: number;
  /** The addresses of its serving endpoints (ready or terminating), whichever node they are on. */
  serving: IP[];
}

export interface ConntrackSnapshot {
  servicePorts: ConntrackServicePort[];
  /** Per family: the node addresses that accept NodePorts, the reply source of a NodePort entry not translated. */
  nodePortAddresses: Map<IPFamily, IP[]>;
}

/** The snapshot's UDP Service ports, and its NodePort addresses as the nftables rules accept them. */
export function conntrackSnapshot(model: { families: FamilyModel[] }): ConntrackSnapshot {
  const servicePorts: ConntrackServicePort[] = [];
  const nodePortAddresses = new Map<IPFamily, IP[]>();
  for (const m of model.families) {
    // The claims' warnings were given when the tables were compiled.
    const claims = resolveClaims(m, []);
    nodePortAddresses.set(m.family, m.nodePortAddresses.matchAll ? m.nodeIPs : m.nodePortAddresses.ips);
    for (const sp of m.servicePorts) {
      if (sp.id.protocol !== 'UDP') continue;
      const addresses = [
        ...(claims.owns(sp, 'ClusterIP', sp.clusterIP) ? [sp.clusterIP] : []),
        ...sp.externalIPs.filter((ip) => claims.owns(sp, 'external IP', ip)),
        ...sp.loadBalancerVIPs.filter((ip) => claims.owns(sp, 'load-balancer IP', ip)),
      ];
      // kube-proxy's rule: serving, whatever the traffic policies, topology or termination.
      const serving = (m.endpoints.get(servicePortKey(sp.id)) ?? []).filter((e) => e.serving).map((e) => e.ip);
      const nodePort = sp.nodePort !== 0 && claims.owns(sp, 'NodePort') ? sp.nodePort : 0;
      servicePorts.push({ family: m.family, name: servicePortNameString(sp.id), addresses, port: sp.port, nodePort, serving });
    }
  }
  return { servicePorts, nodePortAddresses };
}
