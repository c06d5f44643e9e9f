// The flows every bundle has, whatever its Services: the conntrack and SNAT machinery
// around load balancing, written as rows (table, priority, match, actions) with the reason
// beside each. Rows that name an IP family are emitted once per family the snapshot uses;
// traffic of a family it does not use leaves table 0 through NORMAL, untouched.
import {
  DROP,
  IN_PORT,
  NORMAL,
  addr,
  ct,
  ctMarkMatch,
  ctState,
  gotoTable,
  proto,
  regMatch,
  resubmit,
  setCtMark,
  setField,
  type Action,
  type Flow,
  type MatchField,
} from '../../ovs/openflow.js';
import {
  CT_HAIRPIN,
  CT_NEEDS_SNAT,
  CT_SERVICE,
  EP_SELECTED,
  EP_STATE_MASK,
  EP_TO_SELECT,
  NO_ENDPOINT,
  NO_ENDPOINT_USERDATA,
  NODEPORT_ADDRESS,
  PRIORITY,
  SERVICE_COOKIE,
  TABLE,
  type OvsFamily,
} from '../../ovs/pipeline.js';
import { parseCIDR, type IP } from '../../net/ip.js';

type Row = [table: number, priority: number, match: MatchField[], actions: Action[]];

function toFlow([table, priority, match, actions]: Row): Flow {
  return { table, priority, cookie: SERVICE_COOKIE, match, actions };
}


/** IPv6 neighbour discovery (router/neighbour solicitation and advertisement, redirect). */
const ND_TYPES = [133, 134, 135, 136, 137];

const BARE_NAT = { t: 'nat' } as const;
const IPV6_MULTICAST = parseCIDR('ff00::/8')!.cidr;

function familyRows(f: OvsFamily): Row[] {
  const ip = proto(f.ip);
  const rows: Row[] = [
    // Conntrack would call neighbour discovery invalid; it and multicast bypass the pipeline.
    ...(f.family === 6
      ? [
          ...ND_TYPES.map((t): Row => [TABLE.classifier, PRIORITY.high, [proto('icmp6'), { t: 'icmp-type', type: t }], [NORMAL]]),
          [TABLE.classifier, PRIORITY.high, [proto('ipv6'), addr('ipv6_dst', IPV6_MULTICAST)], [NORMAL]] as Row,
        ]
      : []),
    [TABLE.classifier, PRIORITY.normal, [ip], [gotoTable(TABLE.unSNAT)]],
    // Replies to hairpin connections come back to the virtual source: undo that SNAT first.
    [TABLE.unSNAT, PRIORITY.normal, [ip, addr(f.dst, f.virtualServiceIP)], [ct({ table: TABLE.conntrack, zone: f.snatZone, nat: BARE_NAT })]],
    // Every IP packet goes through the DNAT zone; replies are un-DNATed here.
    [TABLE.conntrack, PRIORITY.normal, [ip], [ct({ table: TABLE.conntrackState, zone: f.dnatZone, nat: BARE_NAT })]],
    [TABLE.conntrackState, PRIORITY.high, [ctState('+inv', '+trk'), ip], [DROP]],
    // Established Service connections were load-balanced by their first packet; hairpin ones
    // still need their SNAT.
    [TABLE.conntrackState, PRIORITY.normal, [ctState('-new', '+trk'), ctMarkMatch(CT_SERVICE), ip], [gotoTable(TABLE.snat)]],
    [TABLE.conntrackState, PRIORITY.low, [ctState('-new', '+trk'), ip], [gotoTable(TABLE.output)]],
    // Resubmits, not gotos: each stage runs and the packet comes back for the next one.
    [TABLE.preRouting, PRIORITY.normal, [ip], [resubmit(TABLE.nodePortMark), resubmit(TABLE.sessionAffinity), resubmit(TABLE.serviceLB)]],
    // The first packet of a hairpin connection: source becomes the virtual IP so that the
    // endpoint's reply comes back through the bridge.
    [
      TABLE.snat,
      PRIORITY.normal,
      [ctState('+new', '+trk'), ctMarkMatch(CT_HAIRPIN), ip],
      [ct({ commit: true, table: TABLE.conntrackCommit, zone: f.snatZone, nat: { t: 'snat', ip: f.virtualServiceIP }, exec: [setCtMark(CT_SERVICE), setCtMark(CT_HAIRPIN)] })],
    ],
    // Later request packets of such a connection: apply the SNAT recorded in the SNAT zone.
    [TABLE.snat, PRIORITY.normal, [ctState('-new', '+trk', '-rpl'), ctMarkMatch(CT_NEEDS_SNAT), ip], [ct({ table: TABLE.conntrackCommit, zone: f.snatZone, nat: BARE_NAT })]],
    // Connections that are not Services are committed too, else their replies are +inv.
    [TABLE.conntrackCommit, PRIORITY.normal, [ctState('+new', '+trk'), { t: 'ct-mark', value: 0, mask: CT_SERVICE }, ip], [ct({ commit: true, table: TABLE.output, zone: f.dnatZone })]],
  ];
  return rows;
}

/** Rows that do not depend on the family: defaults of each table and the endpoint states. */
const COMMON_ROWS: Row[] = [
  [TABLE.classifier, PRIORITY.miss, [], [NORMAL]],
  [TABLE.unSNAT, PRIORITY.miss, [], [gotoTable(TABLE.conntrack)]],
  [TABLE.conntrackState, PRIORITY.miss, [], [gotoTable(TABLE.preRouting)]],
  // No learned affinity: the packet still needs an endpoint.
  [TABLE.sessionAffinity, PRIORITY.miss, [], [setField(EP_TO_SELECT, EP_STATE_MASK, 'reg4')]],
  [TABLE.serviceLB, PRIORITY.miss, [], [gotoTable(TABLE.endpointDNAT)]],
  // Antrea's reject: the agent answers the packet-in with a TCP RST or ICMP unreachable.
  [TABLE.endpointDNAT, PRIORITY.normal, [regMatch('reg0', NO_ENDPOINT, NO_ENDPOINT)], [{ t: 'controller', reason: 'no_match', userdata: NO_ENDPOINT_USERDATA }]],
  // A learned endpoint that no longer has a DNAT flow (it left the Service): select again.
  [TABLE.endpointDNAT, PRIORITY.low, [regMatch('reg4', EP_SELECTED, EP_STATE_MASK)], [setField(EP_TO_SELECT, EP_STATE_MASK, 'reg4'), resubmit(TABLE.serviceLB)]],
  [TABLE.endpointDNAT, PRIORITY.miss, [], [gotoTable(TABLE.snatMark)]],
  [TABLE.snatMark, PRIORITY.miss, [], [gotoTable(TABLE.snat)]],
  [TABLE.snat, PRIORITY.miss, [], [gotoTable(TABLE.conntrackCommit)]],
  [TABLE.conntrackCommit, PRIORITY.miss, [], [gotoTable(TABLE.output)]],
  // Hairpin packets go back out of the port they came from; NORMAL would not send them there.
  [TABLE.output, PRIORITY.normal, [ctMarkMatch(CT_HAIRPIN)], [IN_PORT]],
  [TABLE.output, PRIORITY.miss, [], [NORMAL]],
];

export function fixedFlows(families: OvsFamily[]): Flow[] {
  return [...COMMON_ROWS, ...families.flatMap(familyRows)].map(toFlow);
}

/** Table 13: destinations that accept NodePorts set reg4[19] for the load-balancing flows. */
export function nodePortMarkFlows(f: OvsFamily, addresses: IP[]): Flow[] {
  return [...addresses, f.virtualNodePortIP].map((ip) =>
    toFlow([TABLE.nodePortMark, PRIORITY.normal, [proto(f.ip), addr(f.dst, ip)], [setField(NODEPORT_ADDRESS, NODEPORT_ADDRESS, 'reg4')]]),
  );
}
