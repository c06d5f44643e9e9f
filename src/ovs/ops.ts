// The operations of an `ovs-ofctl bundle` file as values, and the one place that prints
// them: a full load (bundle.ts) and a change (the ovs diff) are both lists of these. A flow
// or a group is printed from its value (syntax.ts); only a flow deleted by the diff is named
// by the text the bridge's dump gave for it, which ovs-ofctl reads back as it printed it.
import { InternalError } from '../diag/diagnostic.js';
import type { Bucket, Flow, Group } from './openflow.js';
import { hex, matchText, pushActions, type Parts } from './syntax.js';

/** Buckets `from` up to, not including, `to`, numbered by their place in the group. */
export interface BucketRange {
  from: number;
  to: number;
}

export type BundleOp =
  /** `add` replaces a flow of the same table, priority and match, cookie and all; `modify_strict` keeps its counters and what it learned. */
  | { verb: 'add' | 'modify_strict'; target: 'flow'; flow: Flow }
  /** One flow, by its table, priority and match as `dump-flows` printed the match. */
  | { verb: 'delete_strict'; target: 'flow'; table: number; priority: number; match: string }
  /** Every flow of the bridge. */
  | { verb: 'delete'; target: 'flow' }
  /** A select group with some of its buckets; `insert_bucket` appends more to it. */
  | { verb: 'add' | 'modify' | 'add_or_mod' | 'insert_bucket'; target: 'group'; group: Group; buckets: BucketRange }
  | { verb: 'delete'; target: 'group'; id: number | 'all' };

export type GroupVerb = Extract<BundleOp, { target: 'group'; group: Group }>['verb'];

/** The bundle owns the bridge: a load replaces everything, learned flows included. */
export const REPLACE_ALL: readonly BundleOp[] = [
  { verb: 'delete', target: 'flow' },
  { verb: 'delete', target: 'group', id: 'all' },
];

/**
 * A group mod must fit one OpenFlow message (64 KiB); 700 buckets of the largest kind we
 * emit (an IPv6 endpoint load) stay below it, so larger groups get the rest of their
 * buckets through `insert_bucket` operations in the same bundle.
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

/** A group as operations: `verb` with the first share of its buckets, then `insert_bucket` per further share. */
export function groupOps(verb: Exclude<GroupVerb, 'insert_bucket'>, g: Group): BundleOp[] {
  if (g.buckets.length === 0) throw new InternalError(`group ${g.id} has no bucket`);
  const ops: BundleOp[] = [];
  const size = bucketChunkSize(g.buckets.length);
  for (let from = 0; from < g.buckets.length; from += size) {
    const buckets = { from, to: Math.min(from + size, g.buckets.length) };
    ops.push({ verb: from === 0 ? verb : 'insert_bucket', target: 'group', group: g, buckets });
  }
  return ops;
}

function checkFlow(f: Flow): void {
  const ok =
    Number.isInteger(f.table) && f.table >= 0 && f.table < 254 && Number.isInteger(f.priority) && f.priority >= 0 && f.priority <= 65535;
  if (!ok || f.actions.length === 0) throw new InternalError(`bad flow: table ${f.table} priority ${f.priority} actions ${f.actions.length}`);
}

// A bundle has a few cookies and a quarter of a million flows: print each cookie once.
const addHeads = new Map<bigint, string>();
function addHead(cookie: bigint): string {
  let t = addHeads.get(cookie);
  if (t === undefined) addHeads.set(cookie, (t = `flow add cookie=${hex(cookie)},table=`));
  return t;
}

/** `table=T,priority=P[,MATCH] actions=A` after what `o` holds; `match` is the flow's, printed. */
function flowText(o: Parts, f: Flow, match: string): string {
  checkFlow(f);
  o.push(String(f.table), ',priority=', String(f.priority));
  if (match !== '') o.push(',', match);
  o.push(' actions=');
  pushActions(o, f.actions);
  return o.join('');
}

/**
 * The `flow add` line of a flow whose match is printed already (matchText): the bundle
 * knows each flow by its match, so it prints it once for both.
 */
export function addFlowText(f: Flow, match: string): string {
  return flowText([addHead(f.cookie)], f, match);
}

function flowOpText(op: Extract<BundleOp, { target: 'flow' }>): string {
  switch (op.verb) {
    case 'add':
      return addFlowText(op.flow, matchText(op.flow));
    case 'modify_strict':
      return flowText(['flow modify_strict table='], op.flow, matchText(op.flow));
    case 'delete_strict':
      return `flow delete_strict table=${op.table},priority=${op.priority}${op.match === '' ? '' : ','}${op.match}`;
    case 'delete':
      return 'flow delete';
  }
}

function pushBucket(o: Parts, b: Bucket, id: number): void {
  o.push(',bucket=bucket_id:', String(id), ',weight:100,actions=');
  pushActions(o, b.actions);
}

function groupOpText(op: Extract<BundleOp, { target: 'group' }>): string {
  if (op.verb === 'delete') return `group delete group_id=${op.id}`;
  const { group: g, buckets } = op;
  const o: Parts =
    op.verb === 'insert_bucket' ? ['group insert_bucket group_id=', String(g.id), ',command_bucket_id=last'] : ['group ', op.verb, ' group_id=', String(g.id), ',type=select'];
  for (let i = buckets.from; i < buckets.to; i++) pushBucket(o, g.buckets[i], i);
  return o.join('');
}

/** One line of a bundle file. */
export function opText(op: BundleOp): string {
  return op.target === 'flow' ? flowOpText(op) : groupOpText(op);
}

/** A bundle file: a line per operation; nothing for none. */
export function opsText(ops: readonly BundleOp[]): string {
  return ops.length === 0 ? '' : ops.map(opText).join('\n') + '\n';
}
