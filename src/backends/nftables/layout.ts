// Which emitters make a Service port's firewall chain and endpoint choice: kube-proxy's
// own (the default, its bytes unchanged) or the fast-load layout's.
import type { Endpoint } from '../../model/types.js';
import type { BaseTableBuilder } from '../../nft/ruleset.js';
import type { FamilyContext } from './context.js';
import { FAST_LOAD_EMITTERS } from './fast-load/index.js';
import { emitFirewall } from './firewall.js';
import type { ServicePortPlan } from './plan.js';
import { emitEndpointSelection } from './policy.js';

export type Layout = 'kube-proxy' | 'fast-load';
export const LAYOUTS: readonly Layout[] = ['kube-proxy', 'fast-load'];

export interface ServicePortEmitters {
  firewall(b: BaseTableBuilder, ctx: FamilyContext, plan: ServicePortPlan): void;
  selection(b: BaseTableBuilder, ctx: FamilyContext, plan: ServicePortPlan, chain: string, endpoints: Endpoint[]): void;
}

const KUBE_PROXY_EMITTERS: ServicePortEmitters = { firewall: emitFirewall, selection: emitEndpointSelection };

export function layoutEmitters(layout: Layout | undefined): ServicePortEmitters {
  return layout === 'fast-load' ? FAST_LOAD_EMITTERS : KUBE_PROXY_EMITTERS;
}
