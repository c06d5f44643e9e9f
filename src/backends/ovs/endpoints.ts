// Endpoints: the buckets of a Service port's groups, and the flows that turn a selected
// endpoint into a DNAT (table 16) and mark hairpin connections of local endpoints (table
// 17). The latter two depend only on the endpoint, so Services that share an endpoint
// share them (the bundle keeps one copy).
import type { Endpoint, Protocol } from '../../model/types.js';
import { compareIP } from '../../net/ip.js';
import { addr, ct, ctState, proto, regMatch, resubmit, setCtMark, setField, type Bucket, type Flow, type Group, type MatchField } from '../../ovs/openflow.js';
import {
  CT_HAIRPIN,
  CT_NEEDS_SNAT,
  CT_SERVICE,
  EP_PORT_MASK,
  EP_SELECTED,
  EP_UNION_MASK,
  NO_ENDPOINT,
  PRIORITY,
  SERVICE_COOKIE,
  TABLE,
  type OvsFamily,
} from '../../ovs/pipeline.js';
import { protoWord } from './protocol.js';
import type { GroupPlan, ServicePortPlan } from './plan.js';

/** Buckets in endpoint order (the model sorts them); with affinity they go back to table 15 to learn. */
export function serviceGroup(g: GroupPlan, f: OvsFamily, affinity: boolean): Group {
  if (g.endpoints.length === 0) {
    return { id: g.id, buckets: [{ actions: [setField(NO_ENDPOINT, NO_ENDPOINT, 'reg0'), resubmit(TABLE.endpointDNAT)] }] };
  }
  const next = affinity ? TABLE.serviceLB : TABLE.endpointDNAT;
  const buckets: Bucket[] = sortedEndpoints(g.endpoints).map((ep) => ({
    actions: [{ t: 'set-ip', field: f.endpointReg, ip: ep.ip }, setField(ep.port, EP_PORT_MASK, 'reg4'), resubmit(next)],
  }));
  return { id: g.id, buckets };
}

/** Sorted by endpoint IP (as bytes; a group's endpoints are of one family), then port. */
function sortedEndpoints(eps: Endpoint[]): Endpoint[] {
  return [...eps].sort((a, b) => compareIP(a.ip, b.ip) || a.port - b.port);
}

function dnatFlow(ep: Endpoint, protocol: Protocol, f: OvsFamily): Flow {
  const reg3: MatchField = { t: 'reg-ip', reg: f.endpointReg, ip: ep.ip };
  const reg4 = regMatch('reg4', EP_SELECTED | ep.port, EP_UNION_MASK);
  return {
    table: TABLE.endpointDNAT,
    priority: PRIORITY.normal,
    cookie: SERVICE_COOKIE,
    // As OVS prints them: reg3 before reg4, reg4 before xxreg3.
    match: [protoWord(f, protocol), ...(f.family === 4 ? [reg3, reg4] : [reg4, reg3])],
    actions: [
      ct({
        commit: true,
        table: TABLE.snatMark,
        zone: f.dnatZone,
        nat: { t: 'dnat', ip: ep.ip, port: ep.port },
        exec: [setCtMark(CT_SERVICE)],
      }),
    ],
  };
}

/** A local endpoint that reaches itself through the Service: mark the connection for SNAT and IN_PORT. */
function hairpinFlow(ep: Endpoint, f: OvsFamily): Flow {
  return {
    table: TABLE.snatMark,
    priority: PRIORITY.low,
    cookie: SERVICE_COOKIE,
    match: [ctState('+new', '+trk'), proto(f.ip), addr(f.src, ep.ip), addr(f.dst, ep.ip)],
    actions: [
      ct({
        commit: true,
        table: TABLE.snat,
        zone: f.dnatZone,
        exec: [setCtMark(CT_NEEDS_SNAT), setCtMark(CT_HAIRPIN)],
      }),
    ],
  };
}

export function endpointFlows(p: ServicePortPlan, f: OvsFamily): Flow[] {
  return p.reachable.flatMap((ep) => [dnatFlow(ep, p.sp.id.protocol, f), ...(ep.isLocal ? [hairpinFlow(ep, f)] : [])]);
}
