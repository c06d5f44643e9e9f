// Session affinity in one table-wide set instead of a set per endpoint: each set a dynamic
// set costs the kernel a walk of the table's sets when it is loaded (docs/fast-load.md).
// The key is the client address and two 31-bit constants that stand for kube-proxy's
// per-endpoint set; each element carries its Service port's timeout. The same lookups in
// the same order, the same updates on the same paths: element for element the state of
// kube-proxy's sets. Here the set, and its IPv6 form: the constants are hashes of
// kube-proxy's set name, written by endpoint chains; the IPv4 form records the client
// after NAT (affinity-records.ts).
import { hash } from 'node:crypto';
import { concat, goto, setref, type Expr, type Stmt } from '../../../nft/expr.js';
import type { KeyPart } from '../../../nft/objects.js';
import type { TableBuilder } from '../../../nft/ruleset.js';
import type { EndpointChainAffinity } from '../affinity.js';
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
export const constant = (c: number): Expr => ({ t: 'numgen', mod: 1, ...(c === 0 ? {} : { offset: c }) });

/** The table-wide affinity set, declared by the first Service port with affinity (the same set again is no change). */
export function declareAffinitySet(b: TableBuilder, ctx: FamilyContext): void {
  if (b.hasSet(AFFINITY_SET)) return;
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
}

/** The two constants that stand for an endpoint's kube-proxy affinity set: 62 bits of its name's SHA-256. */
export function affinityConstants(setName: string): [number, number] {
  const h = hash('sha256', setName, 'buffer');
  return [h.readUInt32BE(0) >>> 1, h.readUInt32BE(4) >>> 1];
}

// Each endpoint's constants are asked for by its declaration, its lookup and its update:
// hashed once per endpoint's names (the plan keeps one EndpointNames per endpoint).
const constantsOfNames = new WeakMap<EndpointNames, [number, number]>();

function endpointConstants(ep: EndpointNames): [number, number] {
  let c = constantsOfNames.get(ep);
  if (!c) constantsOfNames.set(ep, (c = affinityConstants(ep.affinitySet)));
  return c;
}

/** The parts of an endpoint's members after the client's address: its two constants. */
const constantParts = (ep: EndpointNames): KeyPart[] => endpointConstants(ep).map((n) => ({ t: 'int', n }) as const);

const keyOf = (ctx: FamilyContext, ep: EndpointNames): Expr => {
  const [a, b] = endpointConstants(ep);
  return concat(ctx.saddr, constant(a), constant(b));
};

/** The lookup of a client remembered for `ep`: kube-proxy's `ip saddr @affinity-<endpoint>`. */
export const affinityMember = (ctx: FamilyContext, ep: EndpointNames): Stmt => ({ t: 'match', left: keyOf(ctx, ep), op: '==', right: setref(AFFINITY_SET) });

/**
 * The table-wide affinity set, read by the Service chain's lookups and written by each
 * endpoint chain's one rule (endpoints.ts). Each endpoint a rule writes for is recorded as the owner of its
 * constants (TableBuilder.manage), under kube-proxy's name for its set: the diff reads
 * there which members belong to an endpoint still wanted, and the builder refuses two
 * endpoints with the same 62 bits, which would silently share their clients.
 */
export const TABLE_WIDE_AFFINITY: EndpointChainAffinity = {
  kind: 'endpoint-chains',
  oneEndpointRule: true,
  declare(b: TableBuilder, ctx: FamilyContext, _plan, ep: EndpointNames) {
    declareAffinitySet(b, ctx);
    b.manage(AFFINITY_SET, ep.affinitySet, constantParts(ep));
  },
  lookup: (ctx, ep): Stmt[] => [affinityMember(ctx, ep), goto(ep.chain)],
  update: (ctx, plan, ep): Stmt => ({ t: 'update', set: AFFINITY_SET, key: keyOf(ctx, ep), timeoutSeconds: plan.sp.affinityTimeout }),
};
