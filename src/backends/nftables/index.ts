// The nftables backend: one table per IP family, as kube-proxy's nftables proxier
// programs it.
import { InternalError, type Diagnostic } from '../../diag/diagnostic.js';
import { servicePortKey, type FamilyModel } from '../../model/types.js';
import type { Table } from '../../nft/objects.js';
import { TableBuilder, keyString, type RuleStore } from '../../nft/ruleset.js';
import { resolveClaims } from '../claims.js';
import { familyContext } from './context.js';
import { emitDispatch, ownedDestinations } from './dispatch.js';
import { emitEndpoints } from './endpoints.js';
import { layoutEmitters, type Layout, type OutputFormat, type TableEmitters } from './layout.js';
import { TABLE_COMMENT } from './names.js';
import { NEWEST_KUBE_PROXY, type KubeProxyVersion } from '../../model/kube-proxy-version.js';
import { planServicePort } from './plan.js';
import { emitPolicyChains } from './policy.js';

export interface NftablesOptions {
  tableName: string;
  /** kube-proxy's layout (the default) or fast-load (docs/fast-load.md). */
  layout?: Layout;
  /** The output the table is made for: JSON cannot declare fast-load's affinity set. */
  format?: OutputFormat;
  /** The kube-proxy release whose table to program; the newest by default. */
  version?: KubeProxyVersion;
}

/**
 * The family's table, its rules kept in `store`: their statements (StatementStore: JSON
 * output, tracing), their text only to be printed (TextStore), or their text as the diff
 * reads it (PrintedStore).
 */
export function compileFamily<R>(m: FamilyModel, opts: NftablesOptions, warnings: Diagnostic[], store: RuleStore<R>): R {
  const table: Table = { family: m.family === 4 ? 'ip' : 'ip6', name: opts.tableName, comment: TABLE_COMMENT };
  const b = new TableBuilder(table, store);
  emitFamilyTable(b, m, warnings, layoutEmitters(opts.layout, { format: opts.format ?? 'text', version: opts.version ?? NEWEST_KUBE_PROXY, family: table.family }));
  return b.finish();
}

function emitFamilyTable(b: TableBuilder, m: FamilyModel, warnings: Diagnostic[], layout: TableEmitters): void {
  const ctx = familyContext(m.family, m.masqueradeBit, layout.forms);
  const emit = layout.servicePort;
  layout.fixed(b, ctx, m);
  const claims = resolveClaims(m, warnings);
  for (const sp of m.servicePorts) {
    const plan = planServicePort(sp, m);
    // Chains before what refers to them (endpoints, then the chains and map elements that
    // jump to them), so the builder finds each reference at once. The output prints the
    // chains in this order: a Service port's chains stand together.
    const owned = ownedDestinations(plan, claims);
    emitEndpoints(b, ctx, plan, emit.affinity);
    const firewall = emit.firewall(b, ctx, plan);
    const route = emit.sharedChains?.(b, ctx, m, plan, owned) ?? emitPolicyChains(b, ctx, m, plan, owned, emit);
    emitDispatch(b, plan, owned, { ...route, firewall }, (p, set, key) => {
      // Every destination has one owner (claims.ts), and one owner asks for one verdict.
      throw new InternalError(`${set} element ${keyString(key)} of ${servicePortKey(p.sp.id)} clashes with an element already there`);
    });
    // Affinity recorded after NAT: for the destinations the port was just given.
    if (sp.affinityTimeout !== undefined && emit.affinity.kind === 'recorded-after-nat') emit.affinity.record(b, ctx, m, plan, owned);
  }
  if (emit.affinity.kind === 'recorded-after-nat') emit.affinity.finish(b, ctx, m);
}
