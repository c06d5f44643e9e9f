// Session affinity: where a client's endpoint is remembered. kube-proxy keeps one dynamic
// set per endpoint of a Service port with ClientIP affinity; the Service chain looks the
// client up in each endpoint's set in turn, and the endpoint chain adds or refreshes it.
// fast-load's IPv4 table records the client after NAT instead, and has no endpoint chains
// (fast-load/affinity-records.ts).
import { InternalError } from '../../diag/diagnostic.js';
import type { Endpoint, FamilyModel } from '../../model/types.js';
import { eq, goto, setref, type Stmt } from '../../nft/expr.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import type { OwnedDestinations } from './dispatch.js';
import type { EndpointNames } from './names.js';
import type { ServicePortPlan } from './plan.js';

export type AffinityForm = EndpointChainAffinity | RecordedAffinity;

/** Affinity written by each endpoint's chain, on the way to its DNAT (kube-proxy's). */
export interface EndpointChainAffinity {
  kind: 'endpoint-chains';
  /**
   * Whether the endpoint chain of a Service port with affinity is one rule, the update then
   * the DNAT (fast-load: a rule fewer per endpoint), rather than kube-proxy's two.
   */
  oneEndpointRule: boolean;
  /** What the endpoint's affinity needs declared before its rules (a set). */
  declare(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, ep: EndpointNames): void;
  /** The Service chain's rule: a client remembered for this endpoint goes to it. */
  lookup(ctx: FamilyContext, ep: EndpointNames): Stmt[];
  /** The endpoint chain's statement that remembers (or refreshes) the client. */
  update(ctx: FamilyContext, plan: ServicePortPlan, ep: EndpointNames): Stmt;
}

/**
 * Affinity recorded after NAT: a Service port's policy chain looks the client up for each
 * endpoint with a rule that DNATs there itself, and a chain after NAT records the client of
 * each connection the port DNATed. No endpoint has a chain.
 */
export interface RecordedAffinity {
  kind: 'recorded-after-nat';
  /** A policy chain's endpoint choice among `endpoints`: the lookups, in their order, then the draw. */
  select(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[]): void;
  /** What records the port's clients after NAT, where its chains need it: for every destination the port is reached on. */
  record(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, plan: ServicePortPlan, owned: OwnedDestinations): void;
  /** What the recordings need once every Service port is in the table. */
  finish(b: TableBuilder, ctx: FamilyContext, m: FamilyModel): void;
}

/** The form, where only a form with endpoint chains can do (`what` says who asks). */
export function endpointChainAffinity(affinity: AffinityForm, what: string): EndpointChainAffinity {
  if (affinity.kind !== 'endpoint-chains') throw new InternalError(`${what} needs endpoint chains for session affinity`);
  return affinity;
}

/** kube-proxy's: a set per endpoint, `affinity-<hash>-<svcport>__<endpoint>`. */
export const PER_ENDPOINT_AFFINITY: EndpointChainAffinity = {
  kind: 'endpoint-chains',
  oneEndpointRule: false,
  declare(b, ctx, plan, ep) {
    // "dynamic" is needed because the set is updated from the packet path; without it
    // some kernels add it later and a re-add then fails as a flags change.
    b.set({
      name: ep.affinitySet,
      kind: 'set',
      keyType: [ctx.addrType],
      flags: ['dynamic', 'timeout'],
      timeoutSeconds: plan.sp.affinityTimeout,
    });
  },
  lookup: (ctx, ep) => [eq(ctx.saddr, setref(ep.affinitySet)), goto(ep.chain)],
  update: (ctx, _plan, ep) => ({ t: 'update', set: ep.affinitySet, key: ctx.saddr }),
};
