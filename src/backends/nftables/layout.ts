// The layouts, as one closed map: for each, what makes a table's fixed part (base chains,
// jumps, the table-wide sets and maps) and a Service port's firewall chain, endpoint choice
// and session affinity. kube-proxy's is the default, its bytes unchanged; fast-load
// programs the same behaviour in a form the kernel loads far faster (docs/fast-load.md).
// A layout is an entry of LAYOUT_SPECS; every caller dispatches through it, and the tests
// iterate LAYOUTS.
import { InternalError } from '../../diag/diagnostic.js';
import type { Endpoint, FamilyModel } from '../../model/types.js';
import type { Family, Stmt } from '../../nft/expr.js';
import type { TableBuilder } from '../../nft/ruleset.js';
import { PER_ENDPOINT_AFFINITY, type AffinityForm } from './affinity.js';
import type { FamilyContext } from './context.js';
import type { DispatchRoute, MasqueradeSets, OwnedDestinations } from './dispatch.js';
import { AFFINITY_SET } from './fast-load/affinity.js';
import { emitFastLoadFixedPart, fastLoadEmitters } from './fast-load/index.js';
import { emitFirewall } from './firewall.js';
import { emitKubeProxyFixedPart } from './fixed.js';
import type { ServicePortPlan } from './plan.js';
import { emitEndpointSelection } from './policy.js';
import { KUBE_PROXY_VERSIONS, NEWEST_KUBE_PROXY, type KubeProxyVersion } from '../../model/kube-proxy-version.js';
import { TABLE_FORMS, type TableForms } from './versions.js';

export type Layout = 'kube-proxy' | 'fast-load';

export const DEFAULT_LAYOUT: Layout = 'kube-proxy';

export type OutputFormat = 'text' | 'json';

/**
 * What a table is made for, besides its model, that may change what a layout emits: the
 * output format (JSON cannot declare fast-load's affinity set) and the kube-proxy release
 * whose table kube-proxy's layout programs (versions.ts).
 */
export interface LayoutTarget {
  format: OutputFormat;
  version: KubeProxyVersion;
  /** The table's family: fast-load records affinity after NAT in IPv4 only. */
  family: Family;
}

/** How a policy chain picks among its endpoints (affinity first, then at random). */
export type EndpointSelection = (
  b: TableBuilder,
  ctx: FamilyContext,
  plan: ServicePortPlan,
  chain: string,
  endpoints: Endpoint[],
  affinity: AffinityForm,
) => void;

export interface ServicePortEmitters {
  /** The port's firewall chain when it has source ranges: the chain its `firewall-ips` elements go to. */
  firewall(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan): string | undefined;
  selection: EndpointSelection;
  affinity: AffinityForm;
  /**
   * For a Service port that needs no chains of its own, their work done by chains shared
   * with other ports: where its dispatch elements go (fast-load/shared-dnat.ts,
   * fast-load/local-policy.ts). Undefined
   * (or none given) for a port that keeps its own chains.
   */
  sharedChains?(b: TableBuilder, ctx: FamilyContext, m: FamilyModel, plan: ServicePortPlan, owned: OwnedDestinations): DispatchRoute | undefined;
  /**
   * For a policy chain with these endpoints that would be a lone `goto`, the chain it
   * would go to: the policy chain is not made, and its port's dispatch elements and
   * external chain go there (fast-load/selection.ts). Undefined (or none given): made.
   */
  passThrough?(plan: ServicePortPlan, endpoints: Endpoint[]): string | undefined;
  /**
   * Where the services chain marks Cluster-policy external traffic for masquerade by these
   * sets of destinations: such a port has no external chain, its external dispatch elements
   * go to its policy chain (fast-load/index.ts). Undefined: kube-proxy's external chains.
   */
  masqueradeSets?: MasqueradeSets;
  /**
   * For a port whose policy chains the layout does in its external chain's own rules, the
   * statements that stand for each there (fast-load/local-policy.ts); a ClusterIP that then
   * has no chain to go to is found by the layout's own rules, written here. Undefined (or
   * none given): the chains are made and the external chain goes to them.
   */
  inlinePolicyChains?(b: TableBuilder, ctx: FamilyContext, plan: ServicePortPlan, owned: OwnedDestinations): InlinedPolicy | undefined;
}

/** The DNAT statements that stand for a port's cluster and local policy chains in its external chain, for those not made. */
export interface InlinedPolicy {
  cluster?: Stmt[];
  local?: Stmt[];
}

/** The part of a table no Service port owns: base chains and their jumps, the fixed chains, sets and maps. */
export type FixedPart = (b: TableBuilder, ctx: FamilyContext, m: FamilyModel) => void;

/** What makes one table. */
export interface TableEmitters {
  fixed: FixedPart;
  servicePort: ServicePortEmitters;
  /** The forms of the kube-proxy release the table follows. */
  forms: TableForms;
}

export interface LayoutSpec {
  /** The emitters of a table made for `target`. */
  emitters(target: LayoutTarget): TableEmitters;
  /**
   * The sets whose members the table's own rules write and whose stale members the diff
   * removes (SetContents.managed): the members of these sets are read from a live table.
   */
  managedSets: readonly string[];
  /** Whether `--format json` makes another table than text (what nft 1.0.6's JSON cannot declare). */
  jsonFormDiffers: boolean;
  /** Whether its table differs between kube-proxy releases (so that diff reads the live one's release). */
  followsRelease: boolean;
  /**
   * Whether the text output adds each set's elements in one `add element` command, one
   * element a line, instead of a command per element: nft 1.0.6 then parses and keeps one
   * command per set (fast-load at 10k: 1 s less CPU, 160 MB less memory).
   */
  elementBlocks: boolean;
}

const KUBE_PROXY_EMITTERS: ServicePortEmitters = { firewall: emitFirewall, selection: emitEndpointSelection, affinity: PER_ENDPOINT_AFFINITY };

export const LAYOUT_SPECS: Record<Layout, LayoutSpec> = {
  'kube-proxy': {
    emitters: (t) => ({ fixed: emitKubeProxyFixedPart, servicePort: KUBE_PROXY_EMITTERS, forms: TABLE_FORMS[t.version] }),
    managedSets: [],
    jsonFormDiffers: false,
    followsRelease: true,
    elementBlocks: false,
  },
  'fast-load': {
    // Text: endpoint maps, kube-proxy 1.36's fixed part (hairpin set, inline mark: no rule
    // per endpoint), affinity in one table-wide set, recorded after NAT (IPv4: no endpoint
    // chains) or by endpoint chains of one rule (IPv6). JSON cannot declare the maps' and
    // the affinity set's `typeof` keys on nft 1.0.6: it keeps 1.35's forms, endpoint chains
    // and per-endpoint affinity sets. The behaviour is kube-proxy's in every release.
    emitters: (t) =>
      t.format === 'json'
        ? { fixed: emitKubeProxyFixedPart, servicePort: fastLoadEmitters('chains'), forms: TABLE_FORMS['1.35'] }
        : { fixed: emitFastLoadFixedPart, servicePort: fastLoadEmitters(t.family === 'ip' ? 'recorded' : 'maps'), forms: TABLE_FORMS['1.36'] },
    managedSets: [AFFINITY_SET],
    jsonFormDiffers: true,
    followsRelease: false,
    elementBlocks: true,
  },
};

/** Every layout, the default first. */
export const LAYOUTS = Object.keys(LAYOUT_SPECS) as Layout[];

/** A layout's entry; a value that is none (from an untyped caller) is refused, never taken for kube-proxy's. */
export function layoutSpec(layout: Layout = DEFAULT_LAYOUT): LayoutSpec {
  const spec = Object.hasOwn(LAYOUT_SPECS, layout) ? LAYOUT_SPECS[layout] : undefined;
  if (!spec) throw new InternalError(`no layout ${JSON.stringify(layout)}: one of ${LAYOUTS.join(', ')}`);
  return spec;
}

/** The emitters of one table of `layout` (kube-proxy's by default). */
export function layoutEmitters(layout: Layout = DEFAULT_LAYOUT, target: LayoutTarget = { format: 'text', version: NEWEST_KUBE_PROXY, family: 'ip' }): TableEmitters {
  return layoutSpec(layout).emitters(target);
}

/** One kind of table kproxc programs: a layout, for a kube-proxy release. */
export interface TableKind {
  /** `kube-proxy-1.36`, `fast-load`: how tests and golden folders name it. */
  name: string;
  layout: Layout;
  version: KubeProxyVersion;
}

/**
 * Every kind of table: kube-proxy's layout as each release programs it, and fast-load
 * (the same in every release). The tests iterate it: every kind traces alike and loads.
 */
export const TABLE_KINDS: readonly TableKind[] = [
  ...KUBE_PROXY_VERSIONS.map((version): TableKind => ({ name: `kube-proxy-${version}`, layout: 'kube-proxy', version })),
  ...LAYOUTS.filter((l) => l !== 'kube-proxy').map((layout): TableKind => ({ name: layout, layout, version: NEWEST_KUBE_PROXY })),
];

