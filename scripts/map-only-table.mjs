#!/usr/bin/env node
// The hand-made map-only table the benchmark holds fast-load against: the same Services
// as a benchmark snapshot (scripts/gen-snapshot.mjs's cluster value), their endpoints in
// one map per protocol and the hairpin connections in one set, no chain per endpoint or
// per Service. It is a yardstick, not a proxy: no session affinity, no firewall, no
// NodePorts, no traffic policy, no reject for a Service without endpoints. Its key is a
// Service address, port and draw (`ip daddr . tcp dport . numgen`), so one DNAT rule per
// protocol and endpoint count serves every Service of that count:
//
//   ip daddr . tcp dport @services-tcp-10 dnat ip addr . port to ip daddr . tcp dport . numgen random mod 10 map @endpoints-tcp
//
// Written by hand from the cluster, not by kproxc, so that it measures what nft and the
// kernel ask for a table this small, whatever kproxc makes.
//
//   node scripts/map-only-table.mjs --services 10000 [--endpoints 10] > map-only.nft
import { pathToFileURL } from 'node:url';
import { makeCluster } from './gen-snapshot.mjs';

export const MAP_ONLY_TABLE = 'kproxc-map-only';

const PROTOCOLS = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** The endpoints a Service port DNATs to: the ready ones, else the serving terminating ones (kube-proxy's fallback). */
function endpointsOf(service) {
  const ready = service.endpoints.filter((e) => !e.terminating);
  return ready.length ? ready : service.endpoints;
}

/** The addresses a Service is reached on besides its NodePorts: its ClusterIP and load-balancer IP. */
const addressesOf = (service) => [service.clusterIP, ...(service.lbIP ? [service.lbIP] : [])];

/** Adds `item` to the list at `key` of `map`. */
function push(map, key, item) {
  const list = map.get(key);
  if (list) list.push(item);
  else map.set(key, [item]);
}

/** The table's text for a cluster value, in nft's own syntax for `nft -f`. */
export function mapOnlyTable(cluster) {
  const entries = new Map(); // protocol -> map elements
  const servicesByCount = new Map(); // `${protocol} ${N}` -> set elements
  const hairpins = [];
  for (const s of cluster.services) {
    const eps = endpointsOf(s);
    for (const p of s.ports) {
      const proto = PROTOCOLS[p.protocol ?? 'TCP'];
      for (const e of eps) hairpins.push(`${e.ip} . ${e.ip} . ${proto} . ${p.targetPort}`);
      if (!eps.length) continue;
      for (const addr of addressesOf(s)) {
        push(servicesByCount, `${proto} ${eps.length}`, `${addr} . ${p.port}`);
        eps.forEach((e, i) => push(entries, proto, `${addr} . ${p.port} . ${i} : ${e.ip} . ${p.targetPort}`));
      }
    }
  }
  const out = [`add table ip ${MAP_ONLY_TABLE}`, `delete table ip ${MAP_ONLY_TABLE}`, `table ip ${MAP_ONLY_TABLE} {`];
  for (const proto of entries.keys()) {
    out.push(`\tmap endpoints-${proto} { typeof ip daddr . ${proto} dport . numgen random mod 1 : ip daddr . ${proto} dport ; }`);
  }
  for (const key of servicesByCount.keys()) {
    const [proto, n] = key.split(' ');
    out.push(`\tset services-${proto}-${n} { typeof ip daddr . ${proto} dport ; }`);
  }
  out.push('\tset hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; }');
  out.push('\tchain nat-prerouting {', '\t\ttype nat hook prerouting priority -100 ;', '\t\tjump services', '\t}');
  out.push('\tchain nat-output {', '\t\ttype nat hook output priority -100 ;', '\t\tjump services', '\t}');
  out.push('\tchain nat-postrouting {', '\t\ttype nat hook postrouting priority 100 ;');
  out.push('\t\tct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random', '\t}');
  out.push('\tchain services {');
  for (const key of servicesByCount.keys()) {
    const [proto, n] = key.split(' ');
    out.push(`\t\tip daddr . ${proto} dport @services-${proto}-${n} dnat ip addr . port to ip daddr . ${proto} dport . numgen random mod ${n} map @endpoints-${proto}`);
  }
  out.push('\t}', '}');
  // One `add element` command a set, an element a line: what nft 1.0.6 loads fastest.
  const block = (name, elements) => elements.length && out.push(`add element ip ${MAP_ONLY_TABLE} ${name} {`, elements.map((e) => `\t${e}`).join(',\n'), '}');
  for (const [key, elements] of servicesByCount) block(`services-${key.replace(' ', '-')}`, elements);
  for (const [proto, elements] of entries) block(`endpoints-${proto}`, elements);
  block('hairpin-connections', hairpins);
  return out.join('\n') + '\n';
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  const get = (name, dflt) => {
    const i = argv.indexOf(name);
    return i === -1 ? dflt : Number(argv[i + 1]);
  };
  const cluster = makeCluster(get('--services', 1000), { endpoints: get('--endpoints', 10), mixed: true });
  process.stdout.write(mapOnlyTable(cluster));
}
