// Tracing snapshots in-process, and kube-proxy's packet-flow expectations in our terms.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseIP } from '../../src/net/ip.js';
import { prepareNftablesTrace } from '../../src/trace/nft/index.js';
import { prepareOvsTrace } from '../../src/trace/ovs/index.js';
import { DEFAULT_SOURCE_PORT, type L4Protocol, type TracePacket } from '../../src/trace/packet.js';
import type { PreparedTracer } from '../../src/trace/backend.js';
import type { Verdict } from '../../src/trace/result.js';
import { fixtureArgs, fixtureText } from './fixtures.js';
import { parseArgsToOptions } from './options.js';

export function tracerFor(file: string, extraArgs: string[] = [], backend: 'nftables' | 'ovs' = 'nftables'): PreparedTracer {
  const text = fixtureText(file);
  const opts = parseArgsToOptions([...fixtureArgs(text), ...extraArgs]);
  const prepare = backend === 'ovs' ? prepareOvsTrace : prepareNftablesTrace;
  return prepare([{ name: file, text }], { ...opts, tableName: 'kube-proxy' });
}

export interface FlowPacket {
  name: string;
  sourceIP: string;
  destIP: string;
  destPort: number;
  protocol?: string;
  iif?: string;
  fromNode?: boolean;
  /** kube-proxy's form: "ip:port, ip:port", "DROP", "REJECT", or "" when nothing handled it. */
  output: string;
  masq: boolean;
  note?: string;
}

export interface FlowCase {
  name?: string;
  snapshot: string;
  args?: string[];
  packets: FlowPacket[];
}

export interface FlowFile {
  source: string;
  cases: FlowCase[];
}

export function readFlows(file: string): FlowFile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as FlowFile;
}

export function packetOf(f: Pick<FlowPacket, 'sourceIP' | 'destIP' | 'destPort' | 'protocol' | 'iif' | 'fromNode'>): TracePacket {
  const src = parseIP(f.sourceIP);
  const dst = parseIP(f.destIP);
  if (!src || !dst) throw new Error(`bad IP in expectation ${f.sourceIP} ${f.destIP}`);
  return {
    protocol: (f.protocol ?? 'tcp').toLowerCase() as L4Protocol,
    src,
    dst,
    sport: DEFAULT_SOURCE_PORT,
    dport: f.destPort,
    ...(f.iif ? { iif: f.iif } : {}),
    ...(f.fromNode ? { fromNode: true } : {}),
  };
}

/** kube-proxy's output string as our verdict and endpoint list. */
export function expectedOf(output: string): { verdict: Verdict; endpoints: string[] } {
  if (output === '') return { verdict: 'none', endpoints: [] };
  if (output === 'DROP') return { verdict: 'drop', endpoints: [] };
  if (output === 'REJECT') return { verdict: 'reject', endpoints: [] };
  return { verdict: 'dnat', endpoints: output.split(', ') };
}

export const flowDir = (root: string) => path.join(root, 'test/trace/kube-proxy');
