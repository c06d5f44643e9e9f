// Session affinity recorded after NAT (fast-load's IPv4 table): no chain per endpoint.
// kube-proxy's Service chain looks the client up in each endpoint's set and goes to the
// endpoint's chain, which refreshes the client in that set and DNATs. Here each lookup
// DNATs itself, the draw of a new client is the endpoint map's (as without affinity), and a
// filter chain right after NAT records the client of every connection a Service port with
// affinity DNATed:
//
//   service-…   { ip saddr . numgen random mod 1 offset S . numgen random mod 1 offset H(E1) @affinity meta l4proto tcp dnat to E1
//                 …one such rule per endpoint, in kube-proxy's order…
//                 meta l4proto tcp dnat to numgen random mod N offset B map @endpoint-ips-XX:P }
//   filter-prerouting-post-dnat (dstnat + 10), filter-output-post-dnat (dstnat + 10):
//                 ct direction original ct status ! confirmed ct status dnat jump affinity-record
//   affinity-record { meta l4proto tcp ct original ip daddr . ct original proto-dst vmap @affinity-records-tcp
//                     meta l4proto tcp <NodePort address> ct original proto-dst vmap @affinity-record-nodeports-tcp }
//   affinity-record-… { update @affinity { ip saddr . numgen random mod 1 offset S . jhash ip daddr . tcp dport mod 2147483647 seed 0xK timeout T } }
//
// A policy chain of one endpoint needs no lookup (it would go where the draw goes): its one
// rule writes or refreshes the client's member and DNATs, as kube-proxy's endpoint chain
// does, and a port whose chains all have one endpoint has no recording.
//
// The key is the client, the Service port's constant S, and H(E): the kernel's jhash of the
// endpoint the connection was DNATed to, which the compiler computes for each endpoint
// (nft/jhash.ts), so that the lookup for E finds what the recording wrote for E. The state
// is kube-proxy's element for element: one member per client and endpoint, refreshed by
// each new connection to it (`ct status ! confirmed`: its first packet only, not a
// retransmitted SYN; `ct direction original`: never a reply), with the port's timeout. The
// recording finds the port by the connection's original destination, as the services chain
// found it: a Service address and port, else a NodePort on a NodePort address that is no
// Service address. A connection another table's NAT sent to an endpoint of such a port,
// from one of its destinations, would be recorded too.
//
// IPv4 only: the jhash of an IPv6 key (20 bytes) reads its first 12 in the CPU's byte
// order, which the compiler cannot know; the ip6 table keeps endpoint chains (affinity.ts).
import { hash } from 'node:crypto';
import { InternalError } from '../../../diag/diagnostic.js';
import type { Endpoint, FamilyModel } from '../../../model/types.js';
import { endpointJhash } from '../../../nft/jhash.js';
import { formatIP, type IP } from '../../../net/ip.js';
import { concat, ctStatusDnat, eq, jump, meta, ne, payload, setref, type Expr, type Stmt, type Verdict } from '../../../nft/expr.js';
import type { KeyPart } from '../../../nft/objects.js';
import { keyString, type TableBuilder } from '../../../nft/ruleset.js';
import type { RecordedAffinity } from '../affinity.js';
import type { FamilyContext } from '../context.js';
import { ownedExternalAddresses, type OwnedDestinations } from '../dispatch.js';
import { affinityRecordChain, FILTER_OUTPUT_POST_DNAT, NODEPORT_IPS_SET } from '../names.js';
import { l4Proto, type L4Proto, type ServicePortPlan } from '../plan.js';
import { AFFINITY_SET, constant, declareAffinitySet } from './affinity.js';
import { emitEndpointMap } from './endpoint-map.js';
import { perTable } from './per-table.js';

/** jhash's range: 0 .. 2^31 - 2, as the other constants (a larger modulus lists as a negative number in JSON). */
export const RECORD_HASH_MOD = 0x7fffffff;

/** How many seeds a port tries for hashes its endpoints do not share (two of N share one in about N^2 / 2^32). */
const MAX_SEEDS = 64;
/** How many constants a port tries before one no other port has (a clash is about one in 2^31 per pair). */
const MAX_PROBES = 64;

export const RECORD_CHAIN = 'affinity-record';
/** Where arriving connections are recorded: after DNAT (dstnat + 10), as kube-proxy's filter-output-post-dnat is for the node's own. */
export const FILTER_PREROUTING_POST_DNAT = 'filter-prerouting-post-dnat';
const RECORD_MAPS = 'affinity-records';
const RECORD_NODEPORT_MAPS = 'affinity-record-nodeports';

/** A Service port's part of the key: its constant, and its endpoints' hashes under its seed. */
interface PortKey {
  constant: number;
  seed: number;
  hashes: Map<string, number>;
  /** Whether a policy chain of the port looks clients up (more than one endpoint), and so needs the recording. */
  recorded: boolean;
}

const hostPortOf = (ep: Endpoint) => `${formatIP(ep.ip)}:${ep.port}`;

/** A destination of the recording maps, as the table's record of them names it. */
const addressKey = (proto: L4Proto, ip: IP, port: number) => `${proto} ${formatIP(ip)} ${port}`;

/** Adds a recording element, which no other port may have given its key already. */
function putElement(b: TableBuilder, set: string, key: KeyPart[], value: Verdict, plan: ServicePortPlan): void {
  if (!b.element({ set, key, value })) throw new InternalError(`${set} element ${keyString(key)} of ${plan.nameString} clashes with an element already there`);
}

// Each port's key, by its recording chain; the constants taken, so that no two ports share
// one; the addresses in the recording maps (`PROTO ADDRESS PORT`); and the NodePorts recorded
// (`PROTO PORT`).
const portKeys = perTable(() => ({ byChain: new Map<string, PortKey>(), constants: new Set<number>(), addresses: new Set<string>(), nodePorts: new Set<string>() }));

/**
 * The first seed under which the port's endpoints have distinct hashes: two endpoints
 * with one hash would share their clients. A new endpoint that clashes changes the seed,
 * and the port's clients lose their affinity once.
 */
function seedOf(endpoints: Endpoint[]): { seed: number; hashes: Map<string, number> } {
  const distinct = [...new Map(endpoints.map((ep) => [hostPortOf(ep), ep])).values()];
  for (let seed = 0; seed < MAX_SEEDS; seed++) {
    const hashes = new Map(distinct.map((ep) => [hostPortOf(ep), endpointJhash(ep.ip, ep.port, RECORD_HASH_MOD, seed)]));
    if (new Set(hashes.values()).size === distinct.length) return { seed, hashes };
  }
  throw new InternalError(`no seed of ${MAX_SEEDS} gives the ${distinct.length} endpoints distinct hashes`);
}

/** 31 bits of the SHA-256 of the recording chain's name, then of the name with a probe number, until no other port has it. */
function constantOf(chain: string, taken: Set<number>): number {
  for (let probe = 0; probe < MAX_PROBES; probe++) {
    const c = hash('sha256', probe === 0 ? chain : `${chain}\0${probe}`, 'buffer').readUInt32BE(0) >>> 1;
    if (!taken.has(c)) return c;
  }
  throw new InternalError(`${chain} found no free constant`);
}

/** The port's key, made on its first ask: for every endpoint it may reach, so that the cluster and local chains agree. */
function portKey(b: TableBuilder, plan: ServicePortPlan): PortKey {
  const keys = portKeys(b);
  const chain = affinityRecordChain(plan.chains);
  let k = keys.byChain.get(chain);
  if (!k) {
    const constant = constantOf(chain, keys.constants);
    keys.constants.add(constant);
    k = { constant, ...seedOf(plan.endpoints.allReachableEndpoints), recorded: false };
    keys.byChain.set(chain, k);
  }
  return k;
}

const ctDirectionOriginal: Stmt = eq({ t: 'ct', key: 'direction' }, { t: 'sym', s: 'original' });
const ctStatusNotConfirmed: Stmt = ne({ t: 'ct', key: 'status' }, { t: 'sym', s: 'confirmed' });

/** The recording chains' dispatch: the chain both base chains jump to, for the first packet of each DNATed connection. */
function declareRecording(b: TableBuilder): void {
  if (b.hasChain(RECORD_CHAIN)) return;
  b.chain({ name: RECORD_CHAIN });
  const firstPacketDnated = [ctDirectionOriginal, ctStatusNotConfirmed, ctStatusDnat, jump(RECORD_CHAIN)];
  b.chain({ name: FILTER_PREROUTING_POST_DNAT, base: { type: 'filter', hook: 'prerouting', priority: -90 } });
  b.rule({ chain: FILTER_PREROUTING_POST_DNAT, stmts: firstPacketDnated });
  b.rule({ chain: FILTER_OUTPUT_POST_DNAT, stmts: firstPacketDnated });
}

const originalDaddr = (ctx: FamilyContext): Expr => ({ t: 'ct-original', key: ctx.family === 'ip' ? 'ip daddr' : 'ip6 daddr' });
const originalDport: Expr = { t: 'ct-original', key: 'proto-dst' };

/** The protocol's map from Service address and port to recording chain, and its rule (on first use). */
function addressMap(b: TableBuilder, ctx: FamilyContext, proto: L4Proto): string {
  const map = `${RECORD_MAPS}-${proto}`;
  if (b.hasSet(map)) return map;
  b.set({ name: map, kind: 'map', keyType: [ctx.addrType, 'inet_service'] });
  b.rule({ chain: RECORD_CHAIN, stmts: [eq(meta('l4proto'), { t: 'sym', s: proto }), { t: 'vmap', key: concat(originalDaddr(ctx), originalDport), map }] });
  return map;
}

/**
 * The protocol's map from NodePort to recording chain, and its rule (on first use), after
 * the addresses' rule: for a connection to a NodePort address (any but loopback where every
 * address takes NodePorts: the services chain's `fib daddr type local` has no form for the
 * original destination, and a DNATed connection to another address was no NodePort of this
 * table). A Service address on that port, which the services chain looks up first, is found
 * by the addresses' rule (`finish`).
 */
function nodePortMap(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, proto: L4Proto): string {
  const map = `${RECORD_NODEPORT_MAPS}-${proto}`;
  if (b.hasSet(map)) return map;
  addressMap(b, ctx, proto);
  b.set({ name: map, kind: 'map', keyType: ['inet_service'] });
  const nodePortAddress = m.nodePortAddresses.matchAll ? ne(originalDaddr(ctx), ctx.notLocalhost) : eq(originalDaddr(ctx), setref(NODEPORT_IPS_SET));
  b.rule({ chain: RECORD_CHAIN, stmts: [eq(meta('l4proto'), { t: 'sym', s: proto }), nodePortAddress, { t: 'vmap', key: originalDport, map }] });
  return map;
}

export const RECORDED_AFFINITY: RecordedAffinity = {
  kind: 'recorded-after-nat',
  select(b, ctx, plan, chain, endpoints) {
    if (ctx.family !== 'ip') throw new InternalError('affinity recorded after NAT is IPv4 only');
    declareAffinitySet(b, ctx);
    const k = portKey(b, plan);
    const names = plan.endpointNames(endpoints);
    const keys = endpoints.map((ep, i) => {
      const h = k.hashes.get(hostPortOf(ep));
      if (h === undefined) throw new InternalError(`${hostPortOf(ep)} is not an endpoint ${plan.nameString} may reach`);
      // The owner of the members is the endpoint, under kube-proxy's name for its set: the
      // diff keeps a live member whose endpoint is still wanted, and the builder refuses two
      // endpoints with one key.
      b.manage(AFFINITY_SET, names[i].affinitySet, [
        { t: 'int', n: k.constant },
        { t: 'int', n: h },
      ]);
      return concat(ctx.saddr, constant(k.constant), constant(h));
    });
    const dnat = (ep: Endpoint): Stmt[] => [plan.l4protoIs, { t: 'dnat', ip: ep.ip, port: ep.port }];
    if (endpoints.length === 1) {
      // One endpoint: a lookup would go where the draw goes, so the chain writes (or
      // refreshes) the client's member itself and DNATs, as kube-proxy's endpoint chain
      // does on both paths; nothing needs recording after NAT for it.
      b.rule({ chain, stmts: [{ t: 'update', set: AFFINITY_SET, key: keys[0], timeoutSeconds: plan.sp.affinityTimeout }, ...dnat(endpoints[0])] });
      return;
    }
    k.recorded = true;
    endpoints.forEach((ep, i) => b.rule({ chain, stmts: [eq(keys[i], setref(AFFINITY_SET)), ...dnat(ep)] }));
    emitEndpointMap(b, ctx, chain, endpoints, plan);
  },
  record(b, ctx, m, plan, owned) {
    const chain = affinityRecordChain(plan.chains);
    const k = portKeys(b).byChain.get(chain);
    // No lookups: the port DNATs nothing (no endpoints), or each of its chains has one
    // endpoint and writes its member itself.
    if (!k?.recorded || !plan.endpoints.hasAnyEndpoints) return;
    declareRecording(b);
    b.chain({ name: chain });
    const endpointHash: Expr = { t: 'jhash', key: concat(ctx.daddr, payload(plan.proto, 'dport')), mod: RECORD_HASH_MOD, seed: k.seed };
    b.rule({ chain, stmts: [{ t: 'update', set: AFFINITY_SET, key: concat(ctx.saddr, constant(k.constant), endpointHash), timeoutSeconds: plan.sp.affinityTimeout }] });
    const verdict: Verdict = { kind: 'goto', target: chain };
    // The destinations the port's dispatch elements send to its chains (dispatch.ts).
    const keys = portKeys(b);
    const addresses = addressMap(b, ctx, plan.proto);
    const dispatched = [...(owned.clusterIP && plan.hasInternalEndpoints ? [owned.clusterIP] : []), ...ownedExternalAddresses(owned)];
    for (const ip of dispatched) {
      putElement(b, addresses, [{ t: 'ip', ip }, { t: 'port', n: plan.sp.port }], verdict, plan);
      keys.addresses.add(addressKey(plan.proto, ip, plan.sp.port));
    }
    if (owned.nodePort !== undefined) {
      putElement(b, nodePortMap(b, ctx, m, plan.proto), [{ t: 'port', n: owned.nodePort }], verdict, plan);
      keys.nodePorts.add(`${plan.proto} ${owned.nodePort}`);
    }
  },
  finish(b, ctx, m) {
    const keys = portKeys(b);
    if (keys.nodePorts.size === 0) return;
    // A connection to a Service address on a port that is also a recorded NodePort was
    // dispatched by the Service address, not as the NodePort: where that port records
    // nothing, the addresses' rule returns before the NodePorts' rule can record it.
    const back: Verdict = { kind: 'return' };
    for (const sp of m.servicePorts) {
      const proto = l4Proto(sp);
      if (!keys.nodePorts.has(`${proto} ${sp.port}`)) continue;
      for (const ip of [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerVIPs]) {
        const key = addressKey(proto, ip, sp.port);
        if (keys.addresses.has(key)) continue;
        b.element({ set: addressMap(b, ctx, proto), key: [{ t: 'ip', ip }, { t: 'port', n: sp.port }], value: back });
        keys.addresses.add(key);
      }
    }
  },
};
