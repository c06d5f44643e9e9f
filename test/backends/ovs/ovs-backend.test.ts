// The ovs backend's decisions, one at a time: which groups a Service port gets, how large
// groups are split, how the bundle deduplicates and orders, and the warnings it gives.
import { describe, expect, it } from 'vitest';
import { Bundle } from '../../../src/ovs/bundle.js';
import { DROP, NORMAL, groupAction, proto, resubmit, type Action, type Flow, type Group, type MatchField } from '../../../src/ovs/openflow.js';
import { bucketChunkSize, groupOps, opText } from '../../../src/ovs/ops.js';
import { groupIDCandidate } from '../../../src/backends/ovs/group-ids.js';
import { planFamily } from '../../../src/backends/ovs/plan.js';
import { loadModel } from '../../../src/compile.js';
import { InternalError } from '../../../src/diag/diagnostic.js';
import { kproxc } from '../../helpers/kproxc.js';

const NODE = `apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
`;

function service(name: string, spec: string, endpoints: { ip: string; node: string }[]): string {
  return `---
apiVersion: v1
kind: Service
metadata: {namespace: ns, name: ${name}}
spec:
${spec}
  ports: [{name: p, port: 80, protocol: TCP${spec.includes('NodePort') ? ', nodePort: 30080' : ''}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns, name: ${name}-a, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
endpoints:
${endpoints.map((e) => `- {addresses: [${e.ip}], nodeName: ${e.node}}`).join('\n')}
ports: [{name: p, port: 8080, protocol: TCP}]
`;
}

const EPS = [
  { ip: '10.244.1.5', node: 'n1' },
  { ip: '10.244.2.6', node: 'n2' },
];

function plansFor(spec: string) {
  const model = loadModel([{ name: 'x.yaml', text: NODE + service('svc', spec, EPS) }], {});
  return planFamily(model.families[0]);
}

describe('groups per Service port (Antrea: one of cluster endpoints, one of local ones)', () => {
  const ids = (g?: { id: number }) => g?.id;
  // Group IDs are derived from what the group serves (no other Service here to collide with).
  const CLUSTER = groupIDCandidate(4, 'ns/svc:p/TCP/cluster', 0);
  const LOCAL = groupIDCandidate(4, 'ns/svc:p/TCP/local', 0);
  it('derived IDs differ per role and lie in the IPv4 range', () => {
    expect(CLUSTER).not.toBe(LOCAL);
    for (const id of [CLUSTER, LOCAL]) expect(id >= 1 && id <= 0x0fffffff).toBe(true);
  });
  it('ClusterIP only: one cluster group', () => {
    const [p] = plansFor('  clusterIP: 10.96.0.1');
    expect(p.groups.map((g) => g.endpoints.length)).toEqual([2]);
    expect(p.external).toBeUndefined();
  });
  it('NodePort, both policies Cluster: the same group serves everything', () => {
    const [p] = plansFor('  type: NodePort\n  clusterIP: 10.96.0.1');
    expect(p.groups.length).toBe(1);
    expect([ids(p.internal), ids(p.external), ids(p.cluster)]).toEqual([CLUSTER, CLUSTER, CLUSTER]);
  });
  it('externalTrafficPolicy Local: internal cluster group first, then the local external group', () => {
    const [p] = plansFor('  type: NodePort\n  clusterIP: 10.96.0.1\n  externalTrafficPolicy: Local');
    expect([ids(p.internal), ids(p.external), ids(p.cluster)]).toEqual([CLUSTER, LOCAL, CLUSTER]);
    expect(p.external!.endpoints.map((e) => e.key)).toEqual(['10.244.1.5:8080']);
  });
  it('both policies Local: the local group, and a cluster group for the short-circuit', () => {
    const [p] = plansFor('  type: NodePort\n  clusterIP: 10.96.0.1\n  externalTrafficPolicy: Local\n  internalTrafficPolicy: Local');
    expect([ids(p.internal), ids(p.external), ids(p.cluster)]).toEqual([LOCAL, LOCAL, CLUSTER]);
    expect(p.cluster!.endpoints.length).toBe(2);
  });
  it('internalTrafficPolicy Local only: the local group for ClusterIPs, the cluster group outside', () => {
    const [p] = plansFor('  type: NodePort\n  clusterIP: 10.96.0.1\n  internalTrafficPolicy: Local');
    expect([ids(p.internal), ids(p.external), ids(p.cluster)]).toEqual([LOCAL, CLUSTER, CLUSTER]);
  });
});

describe('large groups', () => {
  const bucket = { actions: [resubmit(16)] };
  const groupLines = (g: Group) => groupOps('add', g).map(opText);
  it('fit one message up to 700 buckets', () => {
    expect(groupLines({ id: 1, buckets: Array(700).fill(bucket) })).toHaveLength(1);
  });
  it('split into equal shares of at most 700, numbered on', () => {
    expect(bucketChunkSize(701)).toBe(351);
    expect(bucketChunkSize(1500)).toBe(500);
    const lines = groupLines({ id: 7, buckets: Array(1500).fill(bucket) });
    expect(lines.map((l) => l.split(' ', 2).join(' '))).toEqual(['group add', 'group insert_bucket', 'group insert_bucket']);
    expect(lines.map((l) => (l.match(/bucket=/g) ?? []).length)).toEqual([500, 500, 500]);
    const ids = lines.flatMap((l) => [...l.matchAll(/bucket_id:(\d+)/g)].map((m) => Number(m[1])));
    expect(ids).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    expect(lines[1]).toMatch(/^group insert_bucket group_id=7,command_bucket_id=last,bucket=bucket_id:500,/);
  });
});

describe('the bundle', () => {
  const flow = (priority: number, actions: Action[], match: MatchField[] = [proto('ip')]): Flow => ({ table: 15, priority, cookie: 0x1030000000000n, match, actions });

  it('keeps one copy of a flow two owners add, and reports a different flow on the same match', () => {
    const conflicts: string[] = [];
    const b = new Bundle<string>((c) => conflicts.push(`${c.droppedOwner} lost to ${c.keptOwner}`));
    b.addFlow(flow(200, [DROP]), 'a');
    b.addFlow(flow(200, [DROP]), 'b');
    b.addFlow(flow(200, [NORMAL]), 'c');
    expect(conflicts).toEqual(['c lost to a']);
    expect(b.text().match(/^flow add/gm)).toHaveLength(1);
  });

  it('orders deletes, groups by ID, flows by table, priority descending, text', () => {
    const b = new Bundle<string>(() => undefined);
    b.addGroup({ id: 0x10000001, buckets: [{ actions: [DROP] }] });
    b.addGroup({ id: 2, buckets: [{ actions: [DROP] }] });
    b.addFlow({ ...flow(0, [DROP]), table: 16 }, 'x');
    b.addFlow(flow(190, [DROP], [proto('tcp')]), 'x');
    b.addFlow(flow(200, [groupAction(2)], [proto('udp')]), 'x');
    b.addFlow(flow(200, [groupAction(2)], [proto('tcp')]), 'x');
    const lines = b.text().trimEnd().split('\n');
    expect(lines.map((l) => l.replace(/,type=select.*| actions=.*/, ''))).toEqual([
      'flow delete',
      'group delete group_id=all',
      'group add group_id=2',
      'group add group_id=268435457',
      'flow add cookie=0x1030000000000,table=15,priority=200,tcp',
      'flow add cookie=0x1030000000000,table=15,priority=200,udp',
      'flow add cookie=0x1030000000000,table=15,priority=190,tcp',
      'flow add cookie=0x1030000000000,table=16,priority=0,ip',
    ]);
  });

  it.each(['values', 'text'] as const)('refuses a flow that names a group it does not hold (OVS would reject the bundle), %s form', (form) => {
    const b = new Bundle<string>(() => undefined, form);
    b.addFlow(flow(200, [groupAction(9)]), 'x');
    expect(() => b.text()).toThrow(InternalError);
  });

  it('prints the same in text form as in values form, and keeps no values in text form', () => {
    const fill = (b: Bundle<string>) => {
      b.addGroup({ id: 7, buckets: [{ actions: [DROP] }, { actions: [NORMAL] }] });
      b.addGroup({ id: 3, buckets: [{ actions: [DROP] }] });
      b.addFlow(flow(200, [groupAction(7)], [proto('udp')]), 'x');
      b.addFlow({ ...flow(0, [NORMAL], []), table: 0 }, 'x');
      b.addFlow(flow(200, [groupAction(3)], [proto('tcp')]), 'x');
      b.addFlow(flow(10, [DROP]), 'x');
      return b;
    };
    const values = fill(new Bundle<string>(() => undefined, 'values'));
    const text = fill(new Bundle<string>(() => undefined, 'text'));
    expect(text.text()).toBe(values.text());
    expect(values.contents().flows.map((f) => f.text)).toEqual(values.text().trimEnd().split('\n').filter((l) => l.startsWith('flow add')));
    expect(() => text.contents()).toThrow(InternalError);
  });
});

describe('warnings', () => {
  it('two Services on one external IP and port: the first keeps it, the second is warned about', async () => {
    const snapshot =
      NODE +
      service('aaa', '  clusterIP: 10.96.0.1\n  externalIPs: [192.0.2.1]', EPS) +
      service('bbb', '  clusterIP: 10.96.0.2\n  externalIPs: [192.0.2.1]', EPS);
    const r = await kproxc(['compile', '--backend', 'ovs', '-'], snapshot);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^<stdin>:\d+:\d+: Service ns\/bbb: warning: external IP 192\.0\.2\.1 TCP port 80 is also the external IP of ns\/aaa:p\/TCP, which comes first in name order and serves it; ns\/bbb:p\/TCP gets no rule for it\n$/);
    expect(r.stdout.match(/nw_dst=192\.0\.2\.1,tp_dst=80 /g)).toHaveLength(1);
    expect(r.stdout).toMatch(new RegExp(`nw_dst=192\\.0\\.2\\.1,tp_dst=80 actions=.*group:${groupIDCandidate(4, 'ns/aaa:p/TCP/cluster', 0)}$`, 'm'));
  });
});
