// The nftables trace backend: compile the snapshot exactly as `kproxc compile` does, then walk
// the compiled tables (not the model) for each packet. The model only says what the node's
// own addresses are (for `fib ... type local` and routing) and how its Pod interfaces are
// named (for `iifname`).
import { UsageError } from '../../diag/diagnostic.js';
import { compileTables, failOnWarnings, loadModel, type ModelResult } from '../../compile.js';
import { StatementStore, type TableContents } from '../../nft/ruleset.js';
import type { FamilyModel } from '../../model/types.js';
import type { InputFile } from '../../input/source.js';
import { cidrContains, formatIP, type IP } from '../../net/ip.js';
import { traceBackends, type PreparedTracer, type TraceOptions } from '../backend.js';
import type { TracePacket } from '../packet.js';
import type { TraceResult } from '../result.js';
import { seedAffinity } from './affinity.js';
import { compileProgram, type Program } from './program.js';
import { isLocalAddress, type NodeEnv, type PacketState } from './state.js';
import { walk } from './walk.js';

/** A Pod interface name that the node's local-traffic detector recognises. */
function podInterface(m: FamilyModel): string {
  const d = m.localDetector;
  return d.mode === 'bridge' ? d.interfaceName : d.mode === 'prefix' ? `${d.interfacePrefix}0` : 'pod0';
}

/** An interface name that is not a Pod interface, for traffic from outside. */
function externalInterface(m: FamilyModel): string {
  const d = m.localDetector;
  const isPod = (n: string) => (d.mode === 'bridge' ? n === d.interfaceName : d.mode === 'prefix' ? n.startsWith(d.interfacePrefix) : false);
  return ['eth0', 'ens3', 'uplink0'].find((n) => !isPod(n)) ?? 'uplink0';
}

/**
 * Where an arriving packet comes in when --iif is not given: from a Pod when its source is
 * in the Pod range the detector uses (the cluster CIDR, or this node's Pod CIDRs for the
 * interface detectors, since Pods of other nodes come in through the node network).
 */
function defaultInterface(m: FamilyModel, src: IP): { iif: string; why: string } {
  const d = m.localDetector;
  const podRanges = d.mode === 'cidr' ? [d.cidr] : m.podCIDRs;
  return podRanges.some((c) => cidrContains(c, src))
    ? { iif: podInterface(m), why: 'a Pod interface: the source is a Pod address' }
    : { iif: externalInterface(m), why: 'the node network: the source is not a Pod address' };
}

interface FamilyTracer {
  model: FamilyModel;
  program: Program;
  env: NodeEnv;
}

function traceOne(t: FamilyTracer | undefined, packet: TracePacket): TraceResult {
  const family = packet.src.family === 4 ? 'ip' : 'ip6';
  if (!t) {
    return {
      packet,
      origin: 'arriving',
      branches: [{ verdict: 'none', masquerade: false, path: [{ hook: 'prerouting', action: `no ${family} table: no Service of the snapshot has an IPv${packet.src.family} address` }] }],
    };
  }
  // A packet arrives at the node (prerouting), as the issue and kube-proxy's own tracer
  // define a trace; --from-node follows one the node sends itself (output).
  const sentByNode = packet.fromNode === true;
  if (sentByNode && !isLocalAddress(t.env, packet.src)) {
    throw new UsageError(`--from-node: the source ${formatIP(packet.src)} is not an address of the node`);
  }
  let iif = '';
  let origin = 'sent by the node itself: output, then postrouting';
  if (!sentByNode) {
    const chosen = packet.iif !== undefined ? { iif: packet.iif, why: 'as given' } : defaultInterface(t.model, packet.src);
    iif = chosen.iif;
    origin = `arriving on ${iif} (${chosen.why}): prerouting, then input or forward`;
  }
  const state: PacketState = {
    protocol: packet.protocol,
    saddr: packet.src,
    daddr: packet.dst,
    sport: packet.sport,
    dport: packet.dport,
    original: { daddr: packet.dst, dport: packet.dport },
    iif,
    mark: 0,
    hook: sentByNode ? 'output' : 'prerouting',
    masqueraded: false,
    added: new Map(),
    path: [],
  };
  const affinity = seedAffinity(t.program, t.env, packet, state);
  return { packet, origin: `${origin}; table ${family} ${t.program.table}${affinity}`, branches: walk(t.program, t.env, state, sentByNode) };
}

/**
 * The tracer of compiled tables, one per family of the model (tables[i] is the table of
 * model.families[i]): for callers that compile the tables themselves.
 */
export function tableTracer(model: ModelResult, tables: TableContents[]): (p: TracePacket) => TraceResult {
  const byFamily = new Map<number, FamilyTracer>();
  model.families.forEach((m, i) => {
    byFamily.set(m.family, { model: m, program: compileProgram(tables[i]), env: { localAddresses: m.nodeIPs } });
  });
  return (p) => traceOne(byFamily.get(p.src.family), p);
}

export function prepareNftablesTrace(files: InputFile[], opts: TraceOptions): PreparedTracer {
  const model = loadModel(files, opts, opts.strict);
  const warnings = [...model.warnings];
  const tables = compileTables(model, { tableName: opts.tableName, layout: opts.layout }, warnings, StatementStore);
  failOnWarnings(opts.strict, warnings);
  return { warnings, trace: tableTracer(model, tables) };
}

traceBackends.set('nftables', prepareNftablesTrace);
