// Which emitters make a Service port's firewall chain, endpoint choice and session
// affinity: kube-proxy's own (the default, its bytes unchanged) or the fast-load layout's.
import type { Endpoint } from '../../model/types.js';
import type { BaseTableBuilder } from '../../nft/ruleset.js';
import { PER_ENDPOINT_AFFINITY, type AffinityForm } from './affinity.js';
import type { FamilyContext } from './context.js';
import { fastLoadEmitters } from './fast-load/index.js';
import { emitFirewall } from './firewall.js';
import type { ServicePortPlan } from './plan.js';
import { emitEndpointSelection } from './policy.js';

export type Layout = 'kube-proxy' | 'fast-load';
export const LAYOUTS: readonly Layout[] = ['kube-proxy', 'fast-load'];

/** How a policy chain picks among its endpoints (affinity first, then at random). */
export type EndpointSelection = (
  b: BaseTableBuilder,
  ctx: FamilyContext,
  plan: ServicePortPlan,
  chain: string,
  endpoints: Endpoint[],
  affinity: AffinityForm,
) => void;

export interface ServicePortEmitters {
  firewall(b: BaseTableBuilder, ctx: FamilyContext, plan: ServicePortPlan): void;
  selection: EndpointSelection;
  affinity: AffinityForm;
}

const KUBE_PROXY_EMITTERS: ServicePortEmitters = { firewall: emitFirewall, selection: emitEndpointSelection, affinity: PER_ENDPOINT_AFFINITY };

/**
 * The emitters of one table. fast-load's affinity set is declared by `typeof`, which nft
 * 1.0.6's JSON cannot declare: for JSON output it keeps kube-proxy's per-endpoint sets.
 */
export function layoutEmitters(layout: Layout | undefined, format: 'text' | 'json' = 'text'): ServicePortEmitters {
  return layout === 'fast-load' ? fastLoadEmitters(format === 'json' ? 'per-endpoint' : 'table-wide') : KUBE_PROXY_EMITTERS;
}
