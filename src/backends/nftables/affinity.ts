// Session affinity: where a client's endpoint is remembered. kube-proxy keeps one dynamic
// set per endpoint of a Service port with ClientIP affinity; the Service chain looks the
// client up in each endpoint's set in turn, and the endpoint chain adds or refreshes it.
import { eq, goto, setref, type Stmt } from '../../nft/expr.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import type { EndpointNames } from './names.js';
import type { ServicePortPlan } from './plan.js';

export interface AffinityForm {
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

/** kube-proxy's: a set per endpoint, `affinity-<hash>-<svcport>__<endpoint>`. */
export const PER_ENDPOINT_AFFINITY: AffinityForm = {
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
