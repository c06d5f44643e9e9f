// Endpoint choice through table-wide data maps instead of a chain per endpoint. A policy
// chain whose endpoints all listen on one port P (nearly every Service port) DNATs with
// `dnat to numgen random mod N offset B map @endpoint-ips-XX:P`, and its endpoints are the
// elements `B : A`, ..., `B+N-1 : ...` of an address map; one whose endpoints listen on
// different ports (a named port that resolves differently from pod to pod) DNATs with
// `dnat ip addr . port to numgen random mod N offset B map @endpoints-tcp-XX`, its elements
// `B : A . P`. B stands for the policy chain, so every address of a Service port shares one
// entry set and a Local-policy chain has its own. A one-field key costs nft a quarter less
// per element than the two-field `C . i`, and an address a third less than an address and
// a port (measured: docs/fast-load.md).
//
// Why sharded (XX, 8 bits of the chain name's hash): nft 1.0.6 on this kernel checks every
// element added to a data map against every rule bound to the map, so one map for all
// Services costs rules x elements (13 s at 10k Services x 10 endpoints); 256 maps divide it
// by 256 (docs/fast-load.md, "Endpoint maps"). The address maps serve every protocol; the
// maps of addresses and ports are one set per protocol, because a value typed by `th
// dport` fails later transactions ("conflicting protocols specified").
import type { Endpoint } from '../../../model/types.js';
import { concat, payload, type Stmt } from '../../../nft/expr.js';
import type { KeyPart } from '../../../nft/objects.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import type { L4Proto, ServicePortPlan } from '../plan.js';
import { claimDraw, mapSlot } from './key-ranges.js';

/** The map a policy chain's endpoints are in, and its candidate bases (key-ranges.ts). */
export function endpointMapSlot(chain: string, endpoints: readonly Endpoint[], proto: L4Proto): { map: string; bases: (probe: number) => number } {
  return mapSlot(chain, mapsFor(sharedPort(endpoints), proto));
}

/** The one port every endpoint listens on, if they share one. */
function sharedPort(endpoints: readonly Endpoint[]): number | undefined {
  const port = endpoints[0]?.port;
  return endpoints.every((ep) => ep.port === port) ? port : undefined;
}

/** The maps of addresses, for endpoints on one port; else the protocol's maps of addresses and ports. */
const mapsFor = (port: number | undefined, proto: L4Proto) => (port !== undefined ? 'endpoint-ips' : `endpoints-${proto}`);

/** The policy chain's DNAT rule, and its endpoints as elements of its map (declared on first use). */
export function emitEndpointMap(b: TableBuilder, ctx: FamilyContext, chain: string, endpoints: Endpoint[], plan: ServicePortPlan): void {
  b.rule({ chain, stmts: endpointMapDnat(b, ctx, chain, endpoints, plan) });
}

/**
 * The statements of the DNAT rule of policy chain `chain` (`meta l4proto P`, the DNAT),
 * its endpoints written as elements of its map (declared on first use): for the chain's
 * own rule, or for rules that do its work in another chain (local-policy.ts).
 */
export function endpointMapDnat(b: TableBuilder, ctx: FamilyContext, chain: string, endpoints: Endpoint[], plan: ServicePortPlan): Stmt[] {
  const { proto } = plan;
  const port = sharedPort(endpoints);
  const { map, base, key } = claimDraw(b, chain, mapsFor(port, proto), endpoints.length);
  // Declared with its first chain (the same declaration again would be no change).
  if (!b.hasSet(map)) {
    b.set({
      name: map,
      kind: 'map',
      keyType: ['integer'],
      typeof: { t: 'numgen', mod: 1 },
      data: port !== undefined ? { types: [ctx.addrType], typeof: ctx.daddr } : { types: [ctx.addrType, 'inet_service'], typeof: concat(ctx.daddr, payload(proto, 'dport')) },
    });
  }
  // An element per endpoint: its address, or its address and port.
  const value = (ep: Endpoint): KeyPart[] => (port !== undefined ? [{ t: 'ip', ip: ep.ip }] : [{ t: 'ip', ip: ep.ip }, { t: 'port', n: ep.port }]);
  b.elementRange(map, base, endpoints.map(value));
  const dnat: Stmt = port !== undefined ? { t: 'map-addr-dnat', key, map, port } : { t: 'map-dnat', family: ctx.family, key, map };
  return [plan.l4protoIs, dnat];
}
