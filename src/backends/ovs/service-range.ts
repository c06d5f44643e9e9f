// Our extension, kube-proxy's cluster-ips-check in table 15: a new connection to an active
// ClusterIP on a port no Service port there serves is rejected (the no-endpoint packet-in,
// as Antrea rejects), and one to any other address of a ServiceCIDR is dropped. Antrea
// v1.12 lets both pass. The flows sit below every load-balancing flow of the table and
// match only packets still looking for an endpoint, so a Service address and port, or a
// learned affinity (endpoint already selected), never meets them.
import type { FamilyModel } from '../../model/types.js';
import { compareIP, type IP } from '../../net/ip.js';
import { DROP, addr, gotoTable, proto, regMatch, setField, type Flow } from '../../ovs/openflow.js';
import { EP_STATE_MASK, EP_TO_SELECT, NO_ENDPOINT, PRIORITY, SERVICE_COOKIE, TABLE, type OvsFamily } from '../../ovs/pipeline.js';

/** The ClusterIPs of the family's Service ports, each once, in address order. */
function clusterIPs(m: FamilyModel): IP[] {
  const ips = m.servicePorts.map((sp) => sp.clusterIP).sort(compareIP);
  return ips.filter((ip, i) => i === 0 || compareIP(ips[i - 1], ip) !== 0);
}

export function serviceRangeFlows(m: FamilyModel, f: OvsFamily): Flow[] {
  const toSelect = regMatch('reg4', EP_TO_SELECT, EP_STATE_MASK);
  const flow = (priority: number, dst: Parameters<typeof addr>[1], actions: Flow['actions']): Flow => ({
    table: TABLE.serviceLB,
    priority,
    cookie: SERVICE_COOKIE,
    match: [proto(f.ip), toSelect, addr(f.dst, dst)],
    actions,
  });
  // kube-proxy's "Reject traffic to invalid ports of ClusterIPs": any protocol, any port.
  const reject = clusterIPs(m).map((ip) => flow(PRIORITY.clusterIPReject, ip, [setField(NO_ENDPOINT, NO_ENDPOINT, 'reg0'), gotoTable(TABLE.endpointDNAT)]));
  // "Drop traffic to unallocated ClusterIPs".
  const drop = m.serviceCIDRs.map((cidr) => flow(PRIORITY.serviceCIDRDrop, cidr, [DROP]));
  return [...reject, ...drop];
}
