// The nftables backend: one table per IP family, as kube-proxy's nftables proxier
// programs it.
import { InternalError, type Diagnostic } from '../../diag/diagnostic.js';
import { servicePortKey, type FamilyModel } from '../../model/types.js';
import type { Table } from '../../nft/objects.js';
import { BaseTableBuilder, TableBuilder, keyString, type TableContents } from '../../nft/ruleset.js';
import { TextTableBuilder, type TableText } from '../../nft/text-table.js';
import { resolveClaims } from '../claims.js';
import { familyContext } from './context.js';
import { emitDispatch } from './dispatch.js';
import { emitEndpoints } from './endpoints.js';
import { layoutEmitters, type Layout, type OutputFormat, type TableEmitters } from './layout.js';
import { TABLE_COMMENT } from './names.js';
import { planServicePort } from './plan.js';
import { emitPolicyChains } from './policy.js';

export interface NftablesOptions {
  tableName: string;
  /** kube-proxy's layout (the default) or fast-load (docs/fast-load.md). */
  layout?: Layout;
  /** The output the table is made for: JSON cannot declare fast-load's affinity set. */
  format?: OutputFormat;
}

/** The table with every rule's statements, its chains in the order made (JSON output, tracing). */
export function compileFamilyTable(m: FamilyModel, opts: NftablesOptions, warnings: Diagnostic[]): TableContents {
  return built(new TableBuilder(familyTable(m, opts)), m, warnings, opts).finish();
}

/** The table only to be printed as text: each rule's text, not its statements. */
export function compileFamilyTableText(m: FamilyModel, opts: NftablesOptions, warnings: Diagnostic[]): TableText {
  return built(new TextTableBuilder(familyTable(m, opts)), m, warnings, opts).finish();
}

/** The table as the diff reads it: rules kept printed, read back as text when compared. */
export function compileFamilyTablePrinted(m: FamilyModel, opts: NftablesOptions, warnings: Diagnostic[]): TableContents {
  return built(new TextTableBuilder(familyTable(m, opts), 'diff'), m, warnings, opts).contents();
}

function familyTable(m: FamilyModel, opts: NftablesOptions): Table {
  return { family: m.family === 4 ? 'ip' : 'ip6', name: opts.tableName, comment: TABLE_COMMENT };
}

/** The builder with the family's table emitted into it. */
function built<B extends BaseTableBuilder>(b: B, m: FamilyModel, warnings: Diagnostic[], opts: NftablesOptions): B {
  emitFamilyTable(b, m, warnings, layoutEmitters(opts.layout, { format: opts.format ?? 'text' }));
  return b;
}

function emitFamilyTable(b: BaseTableBuilder, m: FamilyModel, warnings: Diagnostic[], layout: TableEmitters): void {
  const ctx = familyContext(m.family, m.masqueradeBit);
  const emit = layout.servicePort;
  layout.fixed(b, ctx, m);
  const claims = resolveClaims(m, warnings);
  for (const sp of m.servicePorts) {
    const plan = planServicePort(sp, m);
    // Chains before what refers to them (endpoints, then the chains and map elements that
    // jump to them), so the builder finds each reference at once. The output prints the
    // chains in this order: a Service port's chains stand together.
    emitEndpoints(b, ctx, plan, emit.affinity);
    emit.firewall(b, ctx, plan);
    emitPolicyChains(b, ctx, m, plan, emit);
    emitDispatch(b, plan, claims, (p, set, key) => {
      // Every destination has one owner (claims.ts), and one owner asks for one verdict.
      throw new InternalError(`${set} element ${keyString(key)} of ${servicePortKey(p.sp.id)} clashes with an element already there`);
    });
  }
}
