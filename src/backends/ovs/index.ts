// The ovs backend: one ovs-ofctl bundle for every IP family of the model, in the shape of
// Antrea v1.12's Service pipeline (see docs/ovs-backend.md).
import { InternalError, type Diagnostic } from '../../diag/diagnostic.js';
import { compareIP, isLoopback, type IP } from '../../net/ip.js';
import { servicePortKey, type FamilyModel, type ServicePort } from '../../model/types.js';
import { ByteChunks, type ChunkWriter } from '../../io/byte-chunks.js';
import { Bundle, type BundleFlow, type FlowConflict, type FlowSink } from '../../ovs/bundle.js';
import { DumpProgram, type DumpIndex } from '../../ovs/dump-program.js';
import type { Group } from '../../ovs/openflow.js';
import { ovsFamily } from '../../ovs/pipeline.js';
import { matchText } from '../../ovs/syntax.js';
import { endpointFlows, serviceGroup } from './endpoints.js';
import { fixedFlows, nodePortMarkFlows } from './fixed.js';
import { MAX_AFFINITY_TIMEOUT, planFamily } from './plan.js';
import { serviceFlows } from './service.js';
import { serviceRangeFlows } from './service-range.js';
import { resolveClaims } from '../claims.js';

type Owner = ServicePort | undefined;

const serviceName = (sp: ServicePort) => `${sp.id.namespace}/${sp.id.name}`;

/**
 * Where NodePorts are accepted. OpenFlow cannot ask "is this a local address", so when
 * nodePortAddresses selects every address, the node's known IPs stand for them.
 */
export function nodePortAddresses(m: FamilyModel): IP[] {
  const ips = m.nodePortAddresses.matchAll ? m.nodeIPs.filter((ip) => !isLoopback(ip)) : m.nodePortAddresses.ips;
  return [...ips].sort(compareIP);
}

/** Every destination has one owner (claims.ts): two flows at one place are a bug of ours. */
function conflictError(c: FlowConflict<Owner>): InternalError {
  const who = (o: Owner) => (o ? servicePortKey(o.id) : 'the fixed pipeline');
  return new InternalError(`table ${c.dropped.table} flow ${matchText(c.dropped)} of ${who(c.droppedOwner)} clashes with the flow of ${who(c.keptOwner)}`);
}

function affinityWarning(sp: ServicePort): Diagnostic {
  return {
    severity: 'warning',
    pos: sp.pos,
    kind: 'Service',
    object: serviceName(sp),
    field: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
    message: `${sp.affinityTimeout} seconds is more than an OpenFlow hard_timeout holds; affinity is kept for ${MAX_AFFINITY_TIMEOUT} seconds`,
  };
}

/** The groups and flows of the bundle as values, each flow with the Service port that asked for it. */
export interface OvsProgram {
  groups: Group[];
  flows: BundleFlow<ServicePort | undefined>[];
}

const conflictThrows = (c: FlowConflict<Owner>): never => {
  throw conflictError(c);
};

/** The bundle as values, in the order it prints: what `kproxc trace --backend ovs` walks. */
export function compileOvsProgram(families: FamilyModel[], warnings: Diagnostic[]): OvsProgram {
  return build(new Bundle<Owner>(conflictThrows, 'values'), families, warnings).contents();
}

/** The bundle's text, written out as chunks of bytes as it is printed (37 MB at 10,000 Services). */
export function compileOvsBundle(families: FamilyModel[], warnings: Diagnostic[]): ChunkWriter {
  const bundle = build(new Bundle<Owner>(conflictThrows, 'text'), families, warnings);
  return (sink) => {
    const out = new ByteChunks(sink);
    bundle.eachLine((l) => out.textLine(l));
    out.finish();
  };
}

/**
 * The program as `ovs-ofctl` dumps it, for the ovs diff and its conntrack clean-up; `held`,
 * the flows of the bridge it is compared with, lets it drop the values of flows held as they are.
 */
export function compileOvsDumpForm(families: FamilyModel[], warnings: Diagnostic[], held?: DumpIndex): DumpProgram<Owner> {
  return build(new DumpProgram<Owner>(conflictThrows, held), families, warnings);
}

/** Every group and flow of the model, added to `sink` in the model's order. */
function build<S extends FlowSink<Owner>>(sink: S, families: FamilyModel[], warnings: Diagnostic[]): S {
  for (const flow of fixedFlows(families.map((m) => ovsFamily(m.family)))) sink.addFlow(flow, undefined);
  const capped = new Map<string, ServicePort>();
  for (const m of families) {
    const f = ovsFamily(m.family);
    for (const flow of nodePortMarkFlows(f, nodePortAddresses(m))) sink.addFlow(flow, undefined);
    for (const flow of serviceRangeFlows(m, f)) sink.addFlow(flow, undefined);
    const claims = resolveClaims(m, warnings);
    for (const plan of planFamily(m)) {
      const affinity = plan.affinityTimeout !== undefined;
      for (const g of plan.groups) sink.addGroup(serviceGroup(g, f, affinity));
      for (const flow of [...serviceFlows(plan, f, m.podCIDRs, claims), ...endpointFlows(plan, f)]) sink.addFlow(flow, plan.sp);
      if ((plan.sp.affinityTimeout ?? 0) > MAX_AFFINITY_TIMEOUT) capped.set(serviceName(plan.sp), plan.sp);
    }
  }
  for (const sp of capped.values()) warnings.push(affinityWarning(sp));
  return sink;
}
