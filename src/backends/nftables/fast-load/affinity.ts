// Session affinity in one table-wide set instead of a set per endpoint: each set a dynamic
// set costs the kernel a walk of the table's sets when it is loaded (docs/fast-load.md).
// The key is the client address and two 31-bit constants that stand for kube-proxy's
// per-endpoint set; each element carries its Service port's timeout. The same lookups in
// the same order, the same updates on the same paths: element for element the state of
// kube-proxy's sets.
import { createHash } from 'node:crypto';
import { InternalError } from '../../../diag/diagnostic.js';
import { concat, goto, setref, type Expr, type Stmt } from '../../../nft/expr.js';
import type { BaseTableBuilder } from '../../../nft/ruleset.js';
import type { AffinityForm } from '../affinity.js';
import type { FamilyContext } from '../context.js';
import type { EndpointNames } from '../names.js';

export const AFFINITY_SET = 'affinity';

/**
 * Fixed, so that no change of endpoints changes the set (nft cannot resize a set in place:
 * recreating it would forget every client). kube-proxy bounds each endpoint's set to 65535
 * clients; one set cannot bound each endpoint, so it takes the largest size nft 1.0.6 lists
 * as given (larger ones list as negative numbers). A dynamic set allocates nothing for it.
 */
export const AFFINITY_SET_SIZE = 0x7fffffff;

/** `numgen random mod 1 offset C` is C: the only constant nft 1.0.6 takes in a lookup's key. */
const constant = (c: number): Expr => ({ t: 'numgen', mod: 1, offset: c });

/** The two constants that stand for an endpoint's kube-proxy affinity set: 62 bits of its name's SHA-256. */
export function affinityConstants(setName: string): [number, number] {
  const h = createHash('sha256').update(setName).digest();
  return [h.readUInt32BE(0) >>> 1, h.readUInt32BE(4) >>> 1];
}

/** A table-wide affinity set; one per table made, since it remembers the constants it gave. */
export function tableWideAffinity(): AffinityForm {
  const owners = new Map<string, string>();
  const keyOf = (ctx: FamilyContext, ep: EndpointNames): Expr => {
    const [a, b] = affinityConstants(ep.affinitySet);
    // Two endpoints with the same 62 bits would share their clients: never silently.
    const id = `${a}.${b}`;
    const owner = owners.get(id);
    if (owner === undefined) owners.set(id, ep.affinitySet);
    else if (owner !== ep.affinitySet) throw new InternalError(`affinity constants ${id} of ${ep.affinitySet} are those of ${owner}`);
    return concat(ctx.saddr, constant(a), constant(b));
  };
  return {
    // Declared with the first endpoint that has affinity; the same set again is no change.
    declare(b: BaseTableBuilder, ctx: FamilyContext) {
      b.set({
        name: AFFINITY_SET,
        kind: 'set',
        keyType: [ctx.addrType, 'integer', 'integer'],
        typeof: concat(ctx.saddr, { t: 'numgen', mod: 1 }, { t: 'numgen', mod: 1 }),
        size: AFFINITY_SET_SIZE,
        flags: ['dynamic', 'timeout'],
        // Every element has its own; this one is never used.
        timeoutSeconds: 10800,
      });
    },
    lookup: (ctx, ep): Stmt[] => [{ t: 'match', left: keyOf(ctx, ep), op: '==', right: setref(AFFINITY_SET) }, goto(ep.chain)],
    update: (ctx, plan, ep): Stmt => ({ t: 'update', set: AFFINITY_SET, key: keyOf(ctx, ep), timeoutSeconds: plan.sp.affinityTimeout }),
  };
}
