// Endpoint choice through table-wide data maps instead of a chain per endpoint: a policy
// chain DNATs with `dnat ip addr . port to numgen random mod N offset B map
// @endpoints-tcp-XX`, and its endpoints are the elements `B : A . P`, ..., `B+N-1 : ...`.
// B stands for the policy chain, so every address of a Service port shares one entry set
// and a Local-policy chain has its own. A one-field key costs nft a quarter less time and
// memory per element than the two-field `C . i` (measured: docs/fast-load.md).
//
// Why sharded (XX, 8 bits of the chain name's hash): nft 1.0.6 on this kernel checks every
// element added to a data map against every rule bound to the map, so one map for all
// Services costs rules x elements (13 s at 10k Services x 10 endpoints); 256 maps per
// protocol divide it by 256 (docs/fast-load.md, "Endpoint maps"). One map per protocol
// because a key or value typed by `th dport` fails later transactions ("conflicting
// protocols specified").
import type { Endpoint } from '../../../model/types.js';
import { concat, payload } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import type { L4Proto, ServicePortPlan } from '../plan.js';
import { claimDraw, mapSlot } from './key-ranges.js';

/** The map a policy chain's endpoints are in, and its candidate bases (key-ranges.ts). */
export function endpointMapSlot(chain: string, proto: L4Proto): { map: string; bases: (probe: number) => number } {
  return mapSlot(chain, endpointMaps(proto));
}

const endpointMaps = (proto: L4Proto) => `endpoints-${proto}`;

/** The policy chain's DNAT rule, and its endpoints as elements of its map (declared on first use). */
export function emitEndpointMap(b: TableBuilder, ctx: FamilyContext, chain: string, endpoints: Endpoint[], plan: ServicePortPlan): void {
  const { proto } = plan;
  const { map, base, key } = claimDraw(b, chain, endpointMaps(proto), endpoints.length);
  // Declared with its first chain (the same declaration again would be no change).
  if (!b.hasSet(map)) {
    b.set({
      name: map,
      kind: 'map',
      keyType: ['integer'],
      typeof: { t: 'numgen', mod: 1 },
      data: { types: [ctx.addrType, 'inet_service'], typeof: concat(ctx.daddr, payload(proto, 'dport')) },
    });
  }
  b.elementRange(
    map,
    base,
    endpoints.map((ep) => [
      { t: 'ip', ip: ep.ip },
      { t: 'port', n: ep.port },
    ]),
  );
  b.rule({ chain, stmts: [plan.l4protoIs, { t: 'map-dnat', family: ctx.family, key, map }] });
}
