// Every bundle operation, target by verb, printed as ovs-ofctl reads it. The map is keyed
// by every target and verb of BundleOp, so an operation added without a line here fails
// the type check.
import { describe, expect, it } from 'vitest';
import { InternalError } from '../../src/diag/diagnostic.js';
import { parseIP } from '../../src/net/ip.js';
import { DROP, NORMAL, addr, groupAction, proto, tpDst, type Flow, type Group } from '../../src/ovs/openflow.js';
import { groupOps, opText, opsText, type BundleOp } from '../../src/ovs/ops.js';

type OpKey<Op> = Op extends BundleOp ? `${Op['target']} ${Op['verb']}` : never;

const flow: Flow = { table: 15, priority: 200, cookie: 0x1030000000005n, match: [proto('tcp'), addr('nw_dst', parseIP('10.96.0.1')!), tpDst(80)], actions: [groupAction(5)] };
const group: Group = { id: 7, buckets: [{ actions: [DROP] }, { actions: [NORMAL] }] };
const BOTH = 'bucket=bucket_id:0,weight:100,actions=drop,bucket=bucket_id:1,weight:100,actions=NORMAL';

const LINES: { [K in OpKey<BundleOp>]: [BundleOp, string][] } = {
  'flow add': [
    [{ verb: 'add', target: 'flow', flow }, 'flow add cookie=0x1030000000005,table=15,priority=200,tcp,nw_dst=10.96.0.1,tp_dst=80 actions=group:5'],
    [{ verb: 'add', target: 'flow', flow: { table: 0, priority: 0, cookie: 0n, match: [], actions: [NORMAL] } }, 'flow add cookie=0x0,table=0,priority=0 actions=NORMAL'],
  ],
  'flow modify_strict': [[{ verb: 'modify_strict', target: 'flow', flow }, 'flow modify_strict table=15,priority=200,tcp,nw_dst=10.96.0.1,tp_dst=80 actions=group:5']],
  'flow delete_strict': [
    [{ verb: 'delete_strict', target: 'flow', table: 14, priority: 200, match: 'tcp,nw_src=10.0.0.1,nw_dst=10.96.0.1,tp_dst=80' }, 'flow delete_strict table=14,priority=200,tcp,nw_src=10.0.0.1,nw_dst=10.96.0.1,tp_dst=80'],
    [{ verb: 'delete_strict', target: 'flow', table: 0, priority: 0, match: '' }, 'flow delete_strict table=0,priority=0'],
  ],
  'flow delete': [[{ verb: 'delete', target: 'flow' }, 'flow delete']],
  'group add': [[{ verb: 'add', target: 'group', group, buckets: { from: 0, to: 2 } }, `group add group_id=7,type=select,${BOTH}`]],
  'group modify': [[{ verb: 'modify', target: 'group', group, buckets: { from: 0, to: 2 } }, `group modify group_id=7,type=select,${BOTH}`]],
  'group add_or_mod': [[{ verb: 'add_or_mod', target: 'group', group, buckets: { from: 0, to: 1 } }, 'group add_or_mod group_id=7,type=select,bucket=bucket_id:0,weight:100,actions=drop']],
  'group insert_bucket': [
    [{ verb: 'insert_bucket', target: 'group', group, buckets: { from: 1, to: 2 } }, 'group insert_bucket group_id=7,command_bucket_id=last,bucket=bucket_id:1,weight:100,actions=NORMAL'],
  ],
  'group delete': [
    [{ verb: 'delete', target: 'group', id: 7 }, 'group delete group_id=7'],
    [{ verb: 'delete', target: 'group', id: 'all' }, 'group delete group_id=all'],
  ],
};

describe('bundle operations', () => {
  for (const [key, cases] of Object.entries(LINES)) {
    it(`${key} prints as ovs-ofctl reads it`, () => {
      for (const [op, line] of cases) {
        expect(`${op.target} ${op.verb}`).toBe(key);
        expect(opText(op)).toBe(line);
      }
    });
  }

  it('a bundle file is a line per operation, and nothing for none', () => {
    expect(opsText([])).toBe('');
    expect(opsText([{ verb: 'delete', target: 'flow' }, { verb: 'delete', target: 'group', id: 'all' }])).toBe('flow delete\ngroup delete group_id=all\n');
  });

  it('a group is its verb with the first share of buckets, then insert_bucket for the rest', () => {
    const big: Group = { id: 9, buckets: Array.from({ length: 1500 }, () => ({ actions: [DROP] })) };
    const ops = groupOps('modify', big);
    expect(ops.map((o) => (o.target === 'group' && 'buckets' in o ? [o.verb, o.buckets.from, o.buckets.to] : []))).toEqual([
      ['modify', 0, 500],
      ['insert_bucket', 500, 1000],
      ['insert_bucket', 1000, 1500],
    ]);
    expect(() => groupOps('add', { id: 3, buckets: [] })).toThrow(InternalError);
  });

  it('refuses a flow OpenFlow cannot hold', () => {
    expect(() => opText({ verb: 'add', target: 'flow', flow: { ...flow, table: 254 } })).toThrow(InternalError);
    expect(() => opText({ verb: 'modify_strict', target: 'flow', flow: { ...flow, actions: [] } })).toThrow(InternalError);
  });
});
