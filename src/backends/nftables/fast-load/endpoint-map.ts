// Endpoint choice through table-wide data maps instead of a chain per endpoint: a policy
// chain DNATs with `dnat ip addr . port to numgen random mod 1 offset C . numgen random
// mod N map @endpoints-tcp-XX`, and its endpoints are the elements `C . 0 : A . P`, ...,
// `C . N-1 : ...`. C (31 bits of the chain name's SHA-256) stands for the policy chain, so
// every address of a Service port shares one entry set and a Local-policy chain has its own.
//
// Why sharded (XX, 8 more bits of the hash): nft 1.0.6 on this kernel checks every element
// added to a data map against every rule bound to the map, so one map for all Services costs
// rules x elements (13 s at 10k Services x 10 endpoints); 256 maps per protocol divide it
// by 256 (docs/fast-load.md, "Endpoint maps"). One map per protocol because a key or value
// typed by `th dport` fails later transactions ("conflicting protocols specified").
import { createHash } from 'node:crypto';
import { InternalError } from '../../../diag/diagnostic.js';
import type { Endpoint } from '../../../model/types.js';
import { concat, payload, type Expr } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import type { L4Proto, ServicePortPlan } from '../plan.js';


/** How many maps per protocol: enough that rules x elements per map stays small at 50k Services. */
export const ENDPOINT_MAP_SHARDS = 256;

/** The map a policy chain's endpoints are in, and its constant. */
export function endpointMapSlot(chain: string, proto: L4Proto): { map: string; constant: number } {
  const h = createHash('sha256').update(chain).digest();
  const shard = h.readUInt8(4) % ENDPOINT_MAP_SHARDS;
  return { map: `endpoints-${proto}-${shard.toString(16).padStart(2, '0')}`, constant: h.readUInt32BE(0) >>> 1 };
}

/** `numgen random mod 1 offset C`: the constant C, the only form nft 1.0.6 takes in a lookup's key. */
const constant = (c: number): Expr => ({ t: 'numgen', mod: 1, offset: c });

// Which chain took each (map, constant): two chains with the same 39 bits would share endpoints.
const owners = new WeakMap<TableBuilder, Map<string, string>>();

function claim(b: TableBuilder, map: string, c: number, chain: string): void {
  let m = owners.get(b);
  if (!m) owners.set(b, (m = new Map()));
  const k = `${map} ${c}`;
  const other = m.get(k);
  if (other !== undefined && other !== chain) throw new InternalError(`chains ${other} and ${chain} share the endpoint map key ${k}`);
  m.set(k, chain);
}

/** The policy chain's DNAT rule, and its endpoints as elements of its map (declared on first use). */
export function emitEndpointMap(b: TableBuilder, ctx: FamilyContext, chain: string, endpoints: Endpoint[], plan: ServicePortPlan): void {
  const { proto } = plan;
  const { map, constant: c } = endpointMapSlot(chain, proto);
  claim(b, map, c, chain);
  // Declared with its first chain (the same declaration again would be no change).
  if (!b.hasSet(map)) {
    b.set({
      name: map,
      kind: 'map',
      keyType: ['integer', 'integer'],
      typeof: concat({ t: 'numgen', mod: 1 }, { t: 'numgen', mod: 1 }),
      data: { types: [ctx.addrType, 'inet_service'], typeof: concat(ctx.daddr, payload(proto, 'dport')) },
    });
  }
  endpoints.forEach((ep, i) => {
    b.element({ set: map, key: [{ t: 'int', n: c }, { t: 'int', n: i }], data: [{ t: 'ip', ip: ep.ip }, { t: 'port', n: ep.port }] });
  });
  const key = concat(constant(c), { t: 'numgen', mod: endpoints.length });
  b.rule({ chain, stmts: [plan.l4protoIs, { t: 'map-dnat', family: ctx.family, key, map }] });
}
