// Data planes a trace can walk. Each compiles the snapshot its own way and returns a tracer
// that walks the compiled program for one packet; the nftables walker registers itself in
// nft/index.ts, the OpenFlow walker (tables, resubmits, select groups, ct actions) as "ovs"
// in ovs/index.ts.
import type { Layout } from '../backends/nftables/layout.js';
import type { Diagnostic } from '../diag/diagnostic.js';
import type { InputFile } from '../input/source.js';
import type { CompileOptions } from '../model/options.js';
import type { TracePacket } from './packet.js';
import type { TraceResult } from './result.js';

export interface TraceOptions extends CompileOptions {
  tableName: string;
  strict?: boolean;
  /** The nftables layout to compile and walk; kube-proxy's by default. */
  layout?: Layout;
}

export interface PreparedTracer {
  trace(packet: TracePacket): TraceResult;
  warnings: Diagnostic[];
}

export type TraceBackend = (files: InputFile[], opts: TraceOptions) => PreparedTracer;

export const traceBackends = new Map<string, TraceBackend>();
