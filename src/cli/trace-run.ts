// The work of `kproxc trace` (trace-command.ts reads its options): compile the snapshot,
// then walk the compiled rules for one packet (flags) or many (--packets FILE), printing
// each path and outcome, or one JSON object per packet.
import { UsageError } from '../diag/diagnostic.js';
import { isIPv4Mapped, parseIP, type IP } from '../net/ip.js';
import { traceBackends } from '../trace/backend.js';
import { traceJson, traceText } from '../trace/format.js';
import '../trace/nft/index.js';
import '../trace/ovs/index.js';
import { DEFAULT_SOURCE_PORT, IFNAME_RE, familyMismatch, type L4Protocol, type TracePacket } from '../trace/packet.js';
import { parsePacketsFile } from '../trace/packets-file.js';
import { compileOptionsFrom, emit, loadInputs, printDiagnostics, type Io } from './main.js';

function ipFlag(flag: string, v: unknown): IP {
  const ip = typeof v === 'string' ? parseIP(v) : null;
  if (!ip || isIPv4Mapped(ip)) throw new UsageError(`${flag}: ${JSON.stringify(v)} is not a valid IP address`);
  return ip;
}

function portFlag(flag: string, v: unknown): number {
  if (typeof v !== 'string' || !/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535) {
    throw new UsageError(`${flag}: must be a whole number from 1 to 65535`);
  }
  return Number(v);
}

/** The one packet the flags describe. */
function packetFromFlags(o: Record<string, unknown>): TracePacket {
  const missing = ['src', 'dst', 'dport'].filter((k) => o[k] === undefined);
  if (missing.length) throw new UsageError(`trace needs ${missing.map((k) => `--${k}`).join(', ')} (or --packets FILE)`);
  const src = ipFlag('--src', o.src);
  const dst = ipFlag('--dst', o.dst);
  if (src.family !== dst.family) throw new UsageError(`--src and --dst must be of one IP family (IPv${src.family} and IPv${dst.family} given)`);
  const mismatch = familyMismatch(o.family, dst);
  if (mismatch) throw new UsageError(`--dst ${String(o.dst)} ${mismatch}`);
  if (o.iif !== undefined && !IFNAME_RE.test(String(o.iif))) throw new UsageError('--iif: must be an interface name of 1 to 15 characters');
  if (o.iif !== undefined && o.fromNode === true) throw new UsageError('--iif and --from-node exclude each other: a packet the node sends arrives on no interface');
  return {
    protocol: o.proto as L4Protocol,
    src,
    dst,
    sport: o.sport === undefined ? DEFAULT_SOURCE_PORT : portFlag('--sport', o.sport),
    dport: portFlag('--dport', o.dport),
    ...(o.iif !== undefined ? { iif: String(o.iif) } : {}),
    ...(o.fromNode === true ? { fromNode: true } : {}),
  };
}

function packets(io: Io, o: Record<string, unknown>): TracePacket[] {
  if (o.packets === undefined) return [packetFromFlags(o)];
  const given = ['src', 'dst', 'dport', 'sport', 'iif', 'fromNode'].filter((k) => o[k] !== undefined);
  if (given.length) throw new UsageError(`--packets cannot be combined with ${given.map((k) => `--${k}`).join(', ')}`);
  const [file] = loadInputs(io, [String(o.packets)]);
  return parsePacketsFile(file, o.family);
}

/** `kproxc trace`, once its options are read. */
export function runTrace(io: Io, files: string[], o: Record<string, unknown>): void {
  const backend = traceBackends.get(String(o.backend));
  if (!backend) {
    // Each data plane's walker registers itself (src/trace/nft/, src/trace/ovs/).
    throw new UsageError(`--backend ${String(o.backend)}: this build cannot trace the ${String(o.backend)} backend's flows yet; use --backend nftables`);
  }
  const list = packets(io, o);
  const inputs = loadInputs(io, files);
  const tracer = backend(inputs, { ...compileOptionsFrom(o), tableName: o.table as string, strict: o.strict === true });
  printDiagnostics(io, tracer.warnings);
  const results = list.map((p) => tracer.trace(p));
  const show = o.json === true ? traceJson : traceText;
  emit(io, undefined, results.map(show).join(o.json === true ? '' : '\n'));
}
