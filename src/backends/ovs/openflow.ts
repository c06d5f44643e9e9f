// OpenFlow flows and groups as values, and the one place that prints them in the syntax of
// `ovs-ofctl bundle` files (OVS 3.1). Every field is printed from a parsed value (an IP, a
// CIDR, a number), never from input text, so no input can inject OpenFlow syntax.
import { InternalError } from '../../diag/diagnostic.js';
import { formatCIDR, formatIP, type CIDR, type IP } from '../../net/ip.js';

/** One match field, `name=value`, or a bare prerequisite word such as `tcp`. */
export type MatchField = string;
/** One action in OVS's text syntax. */
export type Action = string;

export interface Flow {
  table: number;
  priority: number;
  cookie: bigint;
  match: MatchField[];
  actions: Action[];
}

export interface Bucket {
  actions: Action[];
}

export interface Group {
  id: number;
  buckets: Bucket[];
}

/**
 * A group mod must fit one OpenFlow message (64 KiB); 700 buckets of the largest kind we
 * emit (an IPv6 endpoint load) stay below it, so larger groups get the rest of their
 * buckets through `insert_bucket` lines in the same bundle.
 */
export const MAX_BUCKETS_PER_MESSAGE = 700;

/**
 * Buckets per message for a group of n: equal shares of at most MAX_BUCKETS_PER_MESSAGE.
 * Not 700 and the remainder: on OVS 3.1, after insert_bucket a select group builds its
 * dp_hash table from the inserted buckets alone when they fit 64 hash values, and then
 * never selects the others (measured: 700 + 50 buckets reached only the last 50). With
 * equal shares every insert holds more than 350 buckets, so OVS keeps its default hash
 * over all buckets.
 */
export function bucketChunkSize(n: number): number {
  return Math.ceil(n / Math.ceil(n / MAX_BUCKETS_PER_MESSAGE));
}

export function hex(n: number | bigint): string {
  return '0x' + n.toString(16);
}

/** `value/mask` as OVS prints masked register matches and loads. */
export function masked(value: number, mask: number): string {
  return `${hex(value)}/${hex(mask)}`;
}

export function ipText(ip: IP): string {
  return formatIP(ip);
}

/** An address or a network; a full-length prefix prints as a plain address. */
export function netText(c: CIDR): string {
  return c.prefix === c.addr.bytes.length * 8 ? formatIP(c.addr) : formatCIDR(c);
}

/** `IP:PORT`, IPv6 in brackets, as nat() wants it. */
export function hostPort(ip: IP, port: number): string {
  return ip.family === 6 ? `[${formatIP(ip)}]:${port}` : `${formatIP(ip)}:${port}`;
}

function checkFlow(f: Flow): void {
  const ok =
    Number.isInteger(f.table) && f.table >= 0 && f.table < 254 && Number.isInteger(f.priority) && f.priority >= 0 && f.priority <= 65535;
  if (!ok || f.actions.length === 0) throw new InternalError(`bad flow: table ${f.table} priority ${f.priority} actions ${f.actions.length}`);
}

/** The match part, also the identity of a flow within its table and priority. */
export function matchText(f: Flow): string {
  return f.match.join(',');
}

export function flowText(f: Flow): string {
  checkFlow(f);
  const head = [`cookie=${hex(f.cookie)}`, `table=${f.table}`, `priority=${f.priority}`, ...f.match].join(',');
  return `flow add ${head} actions=${f.actions.join(',')}`;
}

function bucketText(b: Bucket, id: number): string {
  return `bucket=bucket_id:${id},weight:100,actions=${b.actions.join(',')}`;
}

/** `group add` with the first share of buckets, then an `insert_bucket` line per further share. */
export function groupLines(g: Group): string[] {
  if (g.buckets.length === 0) throw new InternalError(`group ${g.id} has no bucket`);
  const lines: string[] = [];
  const size = bucketChunkSize(g.buckets.length);
  for (let start = 0; start < g.buckets.length; start += size) {
    const chunk = g.buckets.slice(start, start + size).map((b, i) => bucketText(b, start + i));
    lines.push(
      start === 0
        ? `group add group_id=${g.id},type=select,${chunk.join(',')}`
        : `group insert_bucket group_id=${g.id},command_bucket_id=last,${chunk.join(',')}`,
    );
  }
  return lines;
}

export interface CtAction {
  commit?: boolean;
  table: number;
  zone: number;
  /** `nat`, `nat(dst=...)`, `nat(src=...)`; absent for no NAT. */
  nat?: string;
  exec?: Action[];
}

export function ct(c: CtAction): Action {
  const parts = [...(c.commit ? ['commit'] : []), `table=${c.table}`, `zone=${c.zone}`];
  if (c.nat) parts.push(c.nat);
  if (c.exec && c.exec.length > 0) parts.push(`exec(${c.exec.join(',')})`);
  return `ct(${parts.join(',')})`;
}
