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
import { hash } from 'node:crypto';
import { InternalError } from '../../../diag/diagnostic.js';
import type { Endpoint } from '../../../model/types.js';
import { concat, goto, payload, type Expr } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { FamilyContext } from '../context.js';
import type { L4Proto, ServicePortPlan } from '../plan.js';

/** How many maps per protocol: enough that rules x elements per map stays small at 50k Services. */
export const ENDPOINT_MAP_SHARDS = 256;

/** How many bases a chain tries before the emitter gives up (each clash is about one in 10^8). */
const MAX_PROBES = 64;

/**
 * The map a policy chain's endpoints are in, and its candidate bases in order: 31 bits of
 * the SHA-256 of its name (below 2^31, so B + N - 1 stays inside the key's 32 bits), then of its name with a probe number, for a chain whose range
 * would overlap an earlier one's.
 */
export function endpointMapSlot(chain: string, proto: L4Proto): { map: string; bases: (probe: number) => number } {
  return mapSlot(chain, `endpoints-${proto}`);
}

/** The shard of the maps named `prefix-XX` a chain's keys are in, and its candidate bases. */
function mapSlot(chain: string, prefix: string): { map: string; bases: (probe: number) => number } {
  const h = hash('sha256', chain, 'buffer');
  const shard = h.readUInt8(4) % ENDPOINT_MAP_SHARDS;
  const bases = (probe: number): number =>
    (probe === 0 ? h : hash('sha256', `${chain}\0${probe}`, 'buffer')).readUInt32BE(0) >>> 1;
  return { map: `${prefix}-${shard.toString(16).padStart(2, '0')}`, bases };
}

/** `numgen random mod N offset B`: B + i for each i with probability 1/N. */
const draw = (n: number, base: number): Expr => ({ t: 'numgen', mod: n, ...(base === 0 ? {} : { offset: base }) });

interface Range {
  start: number;
  end: number;
  chain: string;
}

// The key ranges [B, B+N) taken in each map, in the order the chains were emitted (which is
// deterministic, so the same snapshot gives the same bases).
const taken = new WeakMap<TableBuilder, Map<string, Range[]>>();

/**
 * The first candidate base whose range [B, B+N) meets no range already taken in the map.
 * A clash moves only the later chain, to its next candidate: it changes which elements
 * the chain's endpoints are, never where a draw goes, and the map holds no state of its own.
 */
export function claimRange(b: TableBuilder, map: string, chain: string, n: number, bases: (probe: number) => number): number {
  let maps = taken.get(b);
  if (!maps) taken.set(b, (maps = new Map()));
  let ranges = maps.get(map);
  if (!ranges) maps.set(map, (ranges = []));
  for (let probe = 0; probe < MAX_PROBES; probe++) {
    const start = bases(probe);
    const end = start + n;
    const clash = ranges.find((r) => r.start < end && start < r.end);
    if (clash?.chain === chain) throw new InternalError(`chain ${chain} DNATs through ${map} twice`);
    if (clash) continue;
    ranges.push({ start, end, chain });
    return start;
  }
  throw new InternalError(`chain ${chain} found no free key range of ${n} in ${map}`);
}

/** The policy chain's DNAT rule, and its endpoints as elements of its map (declared on first use). */
export function emitEndpointMap(b: TableBuilder, ctx: FamilyContext, chain: string, endpoints: Endpoint[], plan: ServicePortPlan): void {
  const { proto } = plan;
  if (endpoints.length === 0) throw new InternalError(`chain ${chain} has no endpoint to draw`);
  const { map, bases } = endpointMapSlot(chain, proto);
  const base = claimRange(b, map, chain, endpoints.length, bases);
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
  endpoints.forEach((ep, i) => {
    b.element({ set: map, key: [{ t: 'int', n: base + i }], data: [{ t: 'ip', ip: ep.ip }, { t: 'port', n: ep.port }] });
  });
  b.rule({ chain, stmts: [plan.l4protoIs, { t: 'map-dnat', family: ctx.family, key: draw(endpoints.length, base), map }] });
}

/** The table-wide verdict maps of the draws to endpoint chains (session affinity). */
export const AFFINITY_DRAW_MAPS = 'affinity-draw';

/**
 * The draw among a Service port's endpoint chains, as kube-proxy's `numgen random mod N
 * vmap { 0 : goto E0 , ... }` but through a table-wide verdict map: `numgen random mod N
 * offset B vmap @affinity-draw-XX`, whose elements `B+i : goto Ei` are the chains in the
 * same order (an anonymous map per chain would cost the kernel a walk of the transaction
 * each). One chain: a plain goto.
 */
export function emitDrawMap(b: TableBuilder, chain: string, targets: string[]): void {
  if (targets.length === 0) throw new InternalError(`chain ${chain} has no endpoint to draw`);
  if (targets.length === 1) {
    b.rule({ chain, stmts: [goto(targets[0])] });
    return;
  }
  const { map, bases } = mapSlot(chain, AFFINITY_DRAW_MAPS);
  const base = claimRange(b, map, chain, targets.length, bases);
  if (!b.hasSet(map)) b.set({ name: map, kind: 'map', keyType: ['integer'], typeof: { t: 'numgen', mod: 1 } });
  targets.forEach((target, i) => b.element({ set: map, key: [{ t: 'int', n: base + i }], value: { kind: 'goto', target } }));
  b.rule({ chain, stmts: [{ t: 'vmap', key: draw(targets.length, base), map }] });
}
