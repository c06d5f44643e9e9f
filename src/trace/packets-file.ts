// --packets FILE: a JSON (or YAML) array of packets, checked like the snapshot: every problem
// is reported with its file, line and column, and none is traced while any is wrong.
import { yaml } from '../input/yaml-lib.js';
import { UserInputError, type Diagnostic } from '../diag/diagnostic.js';
import { Reporter } from '../check/collector.js';
import { locator, type InputFile, type SourceObject } from '../input/source.js';
import { DEFAULT_SOURCE_PORT, IFNAME_RE, L4_PROTOCOLS, familyMismatch, parseHostPort, type L4Protocol, type TracePacket } from './packet.js';

const FIELDS = ['sourceIP', 'destIP', 'destPort', 'protocol', 'sourcePort', 'iif', 'fromNode', 'affinity'];

function port(r: Reporter, path: (string | number)[], v: unknown): number | null {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
    r.report(path, 'must be a whole number from 1 to 65535');
    return null;
  }
  return v;
}

function packetAt(r: Reporter, i: number, v: unknown, family: unknown): TracePacket | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    r.report([i], 'must be an object with sourceIP, destIP, destPort and optionally protocol');
    return null;
  }
  const o = v as Record<string, unknown>;
  let ok = true;
  for (const k of Object.keys(o)) {
    if (!FIELDS.includes(k)) {
      r.report([i, k], `unknown field (known: ${FIELDS.join(', ')})`);
      ok = false;
    }
  }
  const ip = (k: string) => {
    if (typeof o[k] !== 'string') {
      r.report([i, k], o[k] === undefined ? 'required field is missing' : 'must be a string');
      return null;
    }
    return r.ip([i, k], o[k] as string);
  };
  const src = ip('sourceIP');
  const dst = ip('destIP');
  if (src && dst && src.family !== dst.family) {
    r.report([i, 'destIP'], `is an IPv${dst.family} address but sourceIP is IPv${src.family}`);
    ok = false;
  }
  const mismatch = dst ? familyMismatch(family, dst) : undefined;
  if (mismatch) {
    r.report([i, 'destIP'], mismatch);
    ok = false;
  }
  const dport = o.destPort === undefined ? (r.report([i, 'destPort'], 'required field is missing'), null) : port(r, [i, 'destPort'], o.destPort);
  const sport = o.sourcePort === undefined ? DEFAULT_SOURCE_PORT : port(r, [i, 'sourcePort'], o.sourcePort);
  let protocol: L4Protocol = 'tcp';
  if (o.protocol !== undefined) {
    const p = typeof o.protocol === 'string' ? o.protocol.toLowerCase() : '';
    if (!(L4_PROTOCOLS as string[]).includes(p)) {
      r.report([i, 'protocol'], 'must be one of TCP, UDP, SCTP');
      ok = false;
    } else protocol = p as L4Protocol;
  }
  if (o.iif !== undefined && (typeof o.iif !== 'string' || !IFNAME_RE.test(o.iif))) {
    r.report([i, 'iif'], 'must be an interface name (1 to 15 letters, digits, "_", ".", ":", "@", "+", "-")');
    ok = false;
  }
  if (o.fromNode !== undefined && typeof o.fromNode !== 'boolean') {
    r.report([i, 'fromNode'], 'must be true or false');
    ok = false;
  } else if (o.fromNode === true && o.iif !== undefined) {
    r.report([i, 'fromNode'], 'excludes iif: a packet the node sends arrives on no interface');
    ok = false;
  }
  const affinity = typeof o.affinity === 'string' ? parseHostPort(o.affinity) : null;
  if (o.affinity !== undefined && (!affinity || (src && affinity.ip.family !== src.family))) {
    r.report([i, 'affinity'], affinity ? `is an IPv${affinity.ip.family} endpoint but sourceIP is IPv${src!.family}` : 'must be an endpoint "IP:PORT" ("[IP]:PORT" for IPv6)');
    ok = false;
  }
  if (!ok || !src || !dst || dport === null || sport === null) return null;
  return {
    protocol,
    src,
    dst,
    sport,
    dport,
    ...(o.iif !== undefined ? { iif: o.iif as string } : {}),
    ...(o.fromNode === true ? { fromNode: true } : {}),
    ...(affinity ? { affinity } : {}),
  };
}

/** Parses and checks the packets file (each packet of the --family given, if any); throws UserInputError with every problem. */
export function parsePacketsFile(f: InputFile, family?: unknown): TracePacket[] {
  const diags: Diagnostic[] = [];
  const lines = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(f.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const lp = lines.linePos(e.pos[0]);
      diags.push({ severity: 'error', pos: { file: f.name, line: lp.line, col: lp.col }, message: `invalid ${/\.ya?ml$/.test(f.name) ? 'YAML' : 'JSON'}: ${e.message.split('\n')[0]}` });
    }
    throw new UserInputError(diags);
  }
  const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  const source: SourceObject = { file: f.name, value, locate: locator(doc, lines, f.name, []), order: [0, 0, 0] };
  const r = new Reporter(diags, source, '', undefined);
  if (!Array.isArray(value) || value.length === 0) {
    r.report([], 'must be a non-empty array of packets: [{"sourceIP": ..., "destIP": ..., "destPort": ..., "protocol": ...}]');
    throw new UserInputError(diags);
  }
  const packets = value.map((v, i) => packetAt(r, i, v, family));
  if (diags.length > 0) throw new UserInputError(diags);
  return packets as TracePacket[];
}
