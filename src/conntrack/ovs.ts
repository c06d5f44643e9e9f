// `diff --backend ovs --conntrack`: kube-proxy's clean-up rule (stale.ts) for the ovs
// pipeline's conntrack zone. Where the bridge sends UDP Service traffic is read from its
// flows and groups as `ovs-ofctl dump-flows` and `dump-groups` print them: a table-15 flow
// matching a UDP Service address and port (or, without an address, a NodePort) leads to a
// group, and each bucket of that group loads an endpoint's address into reg3 (xxreg3 for
// IPv6) before the DNAT of table 16. The compiled program is kept as the dumps print it
// (src/ovs/dump-program.ts) and read by the same code, so both sides agree on what
// "translated" means.
import { nodePortAddresses } from '../backends/ovs/index.js';
import type { FamilyModel } from '../model/types.js';
import { compareIP, formatIP, ipFromBytes, parseIP, type IP, type IPFamily } from '../net/ip.js';
import type { DumpProgram } from '../ovs/dump-program.js';
import { IPV4, IPV6, TABLE } from '../ovs/pipeline.js';
import { conntrackSnapshot, type ConntrackSnapshot } from './snapshot.js';
import { conntrackScript, serviceKey, staleDeletes, type ConntrackDelete, type ConntrackLive, type ScriptForm } from './stale.js';

/** A flow as the dump prints it: its table, match and actions (a LiveFlow of src/live/ovs/dump-read.ts is one). */
export interface FlowText {
  table: number;
  match: string;
  actions: string;
}

/** A group as the dump prints it: its ID and whole line (a LiveGroup is one). */
export interface GroupText {
  id: number;
  text: string;
}

const ENDPOINT = /set_field:(0x[0-9a-f]+|0)->(x?x?reg3)(?=,|$)/g;
const TO_GROUP = /(?:^|,)group:(\d+)$/;

/** A register value as OVS prints it, as an address: 32 bits in reg3, 128 in xxreg3. */
function registerIP(hex: string, reg: string): IP {
  const family: IPFamily = reg === 'reg3' ? 4 : 6;
  let v = BigInt(hex);
  const bytes = new Uint8Array(family === 4 ? 4 : 16);
  for (let i = bytes.length - 1; i >= 0; i--) {
    bytes[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return ipFromBytes(family, bytes);
}

/** The endpoint addresses each group's buckets select (none for a group whose bucket rejects). */
function groupEndpoints(groups: GroupText[]): Map<number, IP[]> {
  const out = new Map<number, IP[]>();
  for (const g of groups) {
    const ips: IP[] = [];
    for (const m of g.text.matchAll(ENDPOINT)) {
      const ip = registerIP(m[1], m[2]);
      if (!ips.some((x) => compareIP(x, ip) === 0)) ips.push(ip);
    }
    out.set(g.id, ips);
  }
  return out;
}

/** What a table-15 UDP flow to a group matches: its family, destination address (none for a NodePort) and port. */
function destination(match: string): { family: IPFamily; addr?: IP; port: number } | undefined {
  const fields = match.split(',');
  const family = fields[0] === 'udp' ? 4 : fields[0] === 'udp6' ? 6 : undefined;
  if (family === undefined) return undefined;
  let addr: IP | undefined;
  let port: number | undefined;
  for (const f of fields) {
    if (f.startsWith('nw_dst=') || f.startsWith('ipv6_dst=')) {
      const ip = parseIP(f.slice(f.indexOf('=') + 1));
      if (!ip) return undefined; // a network, not a Service address
      addr = ip;
    } else if (f.startsWith('tp_dst=')) port = Number(f.slice('tp_dst='.length));
  }
  return port === undefined ? undefined : { family, addr, port };
}

function addTo<K>(map: Map<K, IP[]>, key: K, ips: IP[]): void {
  const list = map.get(key) ?? [];
  for (const ip of ips) if (!list.some((x) => compareIP(x, ip) === 0)) list.push(ip);
  map.set(key, list);
}

/**
 * Where the bridge sends each UDP Service destination, per family. A destination whose
 * groups hold no endpoint (packets go to the controller, no conntrack entry is committed)
 * is left out, as not translated, as the nftables side leaves out a Service without
 * endpoints. A destination with several flows (the short-circuit of local Pods, source
 * ranges) goes to the endpoints of all their groups.
 */
export function ovsConntrackLive(flows: FlowText[], groups: GroupText[]): Map<IPFamily, ConntrackLive> {
  const endpoints = groupEndpoints(groups);
  const out = new Map<IPFamily, ConntrackLive>([
    [4, { services: new Map(), nodePorts: new Map() }],
    [6, { services: new Map(), nodePorts: new Map() }],
  ]);
  for (const f of flows) {
    if (f.table !== TABLE.serviceLB) continue;
    const group = TO_GROUP.exec(f.actions);
    const dst = group ? destination(f.match) : undefined;
    const ips = group ? endpoints.get(Number(group[1])) ?? [] : [];
    if (!dst || ips.length === 0) continue;
    const live = out.get(dst.family)!;
    if (dst.addr) addTo(live.services, serviceKey(dst.addr, dst.port), ips);
    else addTo(live.nodePorts, dst.port, ips);
  }
  return out;
}

/** The compiled program as the dumps print it, read as they are. */
export function compiledLive<Owner>(program: DumpProgram<Owner>): Map<IPFamily, ConntrackLive> {
  return ovsConntrackLive(program.dumpedFlows(), program.dumpedGroups());
}

/**
 * The snapshot for the ovs pipeline, whose NodePort addresses are its table-13 ones: the
 * node's (loopback aside) and the virtual NodePort IP the host's own NodePort traffic is
 * sent to. A NodePort entry that was not translated has one of them as reply source.
 */
export function ovsConntrackSnapshot(model: { families: FamilyModel[] }): ConntrackSnapshot {
  const snapshot = conntrackSnapshot(model);
  for (const m of model.families) {
    snapshot.nodePortAddresses.set(m.family, [...nodePortAddresses(m), (m.family === 4 ? IPV4 : IPV6).virtualNodePortIP]);
  }
  return snapshot;
}

/**
 * One `ovs-appctl dpctl/flush-conntrack`: in the pipeline's DNAT zone (where Service
 * connections and untranslated ones are committed), the original tuple's protocol,
 * destination (a NodePort: any) and port, and the reply tuple's source.
 */
export function ovsCommandText(d: ConntrackDelete): string {
  const [zone, nw] = d.family === 4 ? [IPV4.dnatZone, 'ct_nw'] : [IPV6.dnatZone, 'ct_ipv6'];
  const orig = ['ct_nw_proto=17', ...(d.origDst ? [`${nw}_dst=${formatIP(d.origDst)}`] : []), `ct_tp_dst=${d.origPortDst}`];
  return `ovs-appctl dpctl/flush-conntrack zone=${zone} ${orig.join(',')} ${nw}_src=${formatIP(d.replySrc)}`;
}

/**
 * The ovs script's form. flush-conntrack exits 0 when no entry matched (OVS 3.1), so a
 * line fails only when it could not be run (no ovs-vswitchd, no permission, several
 * datapaths); `sh FILE` goes on to the next line regardless.
 */
export const OVS_SCRIPT: ScriptForm = {
  header: '# Run after the ovs-ofctl bundle is applied (sh FILE): clears UDP entries the new flows would not make.',
  line: ovsCommandText,
};

/**
 * The script `diff --backend ovs --conntrack` writes: the live dumps against the program
 * the bundle was diffed from (compiled once, for both), for the new snapshot.
 */
export function ovsConntrackScript<Owner>(model: { families: FamilyModel[] }, compiled: DumpProgram<Owner>, flows: FlowText[], groups: GroupText[]): string {
  const snapshot = ovsConntrackSnapshot(model);
  return conntrackScript(staleDeletes(snapshot, ovsConntrackLive(flows, groups), compiledLive(compiled)), OVS_SCRIPT);
}
