// The ovs trace backend: compile the snapshot exactly as `kproxc compile --backend ovs`
// does, then walk the compiled flows and groups (not the model) for each packet, from
// table 0 of the node's bridge. The model only says which sources are this node's Pods
// and which addresses are the node's, to tell where the packet comes from.
import { UsageError } from '../../diag/diagnostic.js';
import { compileOvsProgram } from '../../backends/ovs/index.js';
import { failOnWarnings, loadModel } from '../../compile.js';
import type { InputFile } from '../../input/source.js';
import type { FamilyModel } from '../../model/types.js';
import { cidrContains, formatIP, ipEquals, isLoopback } from '../../net/ip.js';
import { traceBackends, type PreparedTracer, type TraceOptions } from '../backend.js';
import type { TracePacket } from '../packet.js';
import type { TraceResult } from '../result.js';
import { indexProgram, type Program } from './program.js';
import type { OvsState } from './state.js';
import { walkBridge } from './walk.js';

/** Where the packet enters the bridge, in words (no flow of the pipeline reads in_port). */
function origin(m: FamilyModel | undefined, p: TracePacket): string {
  const port = p.iif !== undefined ? ` on port ${p.iif}` : '';
  if (p.fromNode) return `sent by the node itself into the bridge (through its gateway port): table 0`;
  const pod = m?.podCIDRs.find((c) => cidrContains(c, p.src));
  const from = pod ? `from a local Pod (${formatIP(p.src)} is in this node's Pod CIDR)` : 'from outside the node';
  return `arriving at the bridge${port} ${from}: table 0`;
}

function initialState(p: TracePacket): OvsState {
  return {
    pkt: { protocol: p.protocol, src: p.src, dst: p.dst, sport: p.sport, dport: p.dport, regs: Array<bigint>(16).fill(0n) },
    conns: new Map(),
    outputs: [],
    pending: [],
    stack: [],
    path: [],
  };
}

function traceOne(program: Program, families: FamilyModel[], p: TracePacket): TraceResult {
  const m = families.find((f) => f.family === p.src.family);
  if (p.fromNode && !(isLoopback(p.src) || (m?.nodeIPs ?? []).some((a) => ipEquals(a, p.src)))) {
    throw new UsageError(`--from-node: the source ${formatIP(p.src)} is not an address of the node`);
  }
  // The learned flows an earlier connection installs are not modelled (docs/trace.md).
  if (p.affinity) throw new UsageError('--affinity applies to --backend nftables only: the ovs walk does not install learned affinity flows');
  return { packet: p, origin: origin(m, p), branches: walkBridge(program, initialState(p)) };
}

export function prepareOvsTrace(files: InputFile[], opts: TraceOptions): PreparedTracer {
  const model = loadModel(files, opts, opts.strict);
  const warnings = [...model.warnings];
  const program = indexProgram(compileOvsProgram(model.families, warnings));
  failOnWarnings(opts.strict, warnings);
  return { warnings, trace: (p) => traceOne(program, model.families, p) };
}

traceBackends.set('ovs', prepareOvsTrace);
