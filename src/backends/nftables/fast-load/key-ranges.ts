// Key ranges in table-wide maps: a chain that draws one of N things through a shared map
// takes the keys B .. B+N-1 of one of its shards and draws `numgen random mod N offset B`.
// The endpoint maps (endpoint-map.ts) and the affinity draw maps (selection.ts) both do.
import { hash } from 'node:crypto';
import { InternalError } from '../../../diag/diagnostic.js';
import type { Expr } from '../../../nft/expr.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import { perTable } from './per-table.js';

/** How many shards each set of maps has: enough that rules x elements per map stays small at 50k Services. */
export const MAP_SHARDS = 256;

/** How many bases a chain tries before the emitter gives up (each clash is about one in 10^8). */
const MAX_PROBES = 64;

/**
 * The shard of the maps named `prefix-XX` a chain's keys are in (8 bits of the SHA-256 of
 * its name), and its candidate bases in order: 31 bits of that hash (below 2^31, so B + N - 1
 * stays inside the key's 32 bits), then of its name with a probe number, for a chain whose
 * range would overlap an earlier one's.
 */
export function mapSlot(chain: string, prefix: string): { map: string; bases: (probe: number) => number } {
  const h = hash('sha256', chain, 'buffer');
  const shard = h.readUInt8(4) % MAP_SHARDS;
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

// Ranges are found by the 2^16-wide blocks of keys they touch: a map holds a few hundred
// ranges at 50k Services, and a scan of them all for every claim took a fifth of a second.
const BLOCK_BITS = 16;

/** The key ranges [B, B+N) taken in one map, by the blocks of keys they touch. */
class TakenRanges {
  private readonly byBlock = new Map<number, Range[]>();

  /** A taken range that shares a key with [start, end), if any. */
  clash(start: number, end: number): Range | undefined {
    for (let block = start >>> BLOCK_BITS; block <= (end - 1) >>> BLOCK_BITS; block++) {
      const hit = this.byBlock.get(block)?.find((r) => r.start < end && start < r.end);
      if (hit) return hit;
    }
    return undefined;
  }

  add(r: Range): void {
    for (let block = r.start >>> BLOCK_BITS; block <= (r.end - 1) >>> BLOCK_BITS; block++) {
      const list = this.byBlock.get(block);
      if (list) list.push(r);
      else this.byBlock.set(block, [r]);
    }
  }
}

// The key ranges taken in each map, in the order the chains were emitted (which is
// deterministic, so the same snapshot gives the same bases).
const taken = perTable(() => new Map<string, TakenRanges>());

/**
 * The first candidate base whose range [B, B+N) meets no range already taken in the map.
 * A clash moves only the later chain, to its next candidate: it changes which elements
 * the chain's endpoints are, never where a draw goes, and the map holds no state of its own.
 */
export function claimRange(b: TableBuilder, map: string, chain: string, n: number, bases: (probe: number) => number): number {
  const maps = taken(b);
  let ranges = maps.get(map);
  if (!ranges) maps.set(map, (ranges = new TakenRanges()));
  for (let probe = 0; probe < MAX_PROBES; probe++) {
    const start = bases(probe);
    const end = start + n;
    const clash = ranges.clash(start, end);
    if (clash?.chain === chain) throw new InternalError(`chain ${chain} DNATs through ${map} twice`);
    if (clash) continue;
    ranges.add({ start, end, chain });
    return start;
  }
  throw new InternalError(`chain ${chain} found no free key range of ${n} in ${map}`);
}

/** The keys a chain takes for `n` things in its shard of the `prefix` maps, and its draw. */
export function claimDraw(b: TableBuilder, chain: string, prefix: string, n: number): { map: string; base: number; key: Expr } {
  if (n === 0) throw new InternalError(`chain ${chain} has nothing to draw`);
  const { map, bases } = mapSlot(chain, prefix);
  const base = claimRange(b, map, chain, n, bases);
  return { map, base, key: draw(n, base) };
}
