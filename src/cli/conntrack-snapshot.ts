// The new snapshot as the conntrack clean-up (src/diff/conntrack.ts) needs it: each UDP
// Service port's addresses and NodePort (those it owns, as the rules give them) and the
// addresses of its serving endpoints.
import { resolveClaims } from '../backends/claims.js';
import { nodePortAddresses } from '../backends/ovs/index.js';
import { IPV4, IPV6 } from '../ovs/pipeline.js';
import type { ModelResult } from '../compile.js';
import type { ConntrackServicePort, ConntrackSnapshot } from '../diff/conntrack.js';
import type { IP, IPFamily } from '../net/ip.js';
import { servicePortKey, servicePortNameString } from '../model/types.js';

export function conntrackSnapshot(model: ModelResult): ConntrackSnapshot {
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

/**
 * The same for the ovs pipeline, whose NodePort addresses are its table-13 ones: the
 * node's (loopback aside) and the virtual NodePort IP the host's own NodePort traffic is
 * sent to. A NodePort entry that was not translated has one of them as reply source.
 */
export function ovsConntrackSnapshot(model: ModelResult): ConntrackSnapshot {
  const snapshot = conntrackSnapshot(model);
  for (const m of model.families) {
    snapshot.nodePortAddresses.set(m.family, [...nodePortAddresses(m), (m.family === 4 ? IPV4 : IPV6).virtualNodePortIP]);
  }
  return snapshot;
}
