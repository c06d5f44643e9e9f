// The work of `kproxc trace`: compile the snapshot, then walk the compiled rules for one
// packet (flags) or many (--packets FILE), printing each path and outcome, or one JSON
// object per packet.
import { UsageError } from '../diag/diagnostic.js';
import { traceBackends } from '../trace/backend.js';
import { traceJson, traceText } from '../trace/format.js';
import '../trace/nft/index.js';
import '../trace/ovs/index.js';
import type { TracePacket } from '../trace/packet.js';
import { parsePacketsFile } from '../trace/packets-file.js';
import { emit, EXIT_OK, loadInputs, printDiagnostics, type ExitCode, type Io } from './io.js';
import type { TraceCommandOptions } from './options.js';

function packets(io: Io, o: TraceCommandOptions): TracePacket[] {
  if ('packet' in o.packets) return [o.packets.packet];
  const [file] = loadInputs(io, [o.packets.file]);
  return parsePacketsFile(file, o.compile.family === undefined ? undefined : `ipv${o.compile.family}`);
}

export async function runTrace(io: Io, files: string[], o: TraceCommandOptions): Promise<ExitCode> {
  const backend = traceBackends.get(o.backend);
  if (!backend) {
    // Each data plane's walker registers itself (src/trace/nft/, src/trace/ovs/).
    throw new UsageError(`--backend ${o.backend}: this build cannot trace the ${o.backend} backend's flows yet; use --backend nftables`);
  }
  const list = packets(io, o);
  const inputs = loadInputs(io, files);
  const tracer = backend(inputs, { ...o.compile, tableName: o.tableName, strict: o.strict, layout: o.layout });
  printDiagnostics(io, tracer.warnings);
  const results = list.map((p) => tracer.trace(p));
  const show = o.json ? traceJson : traceText;
  emit(io, undefined, results.map(show).join(o.json ? '' : '\n'));
  return EXIT_OK;
}
