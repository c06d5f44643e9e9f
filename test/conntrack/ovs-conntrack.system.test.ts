// `kproxc diff --backend ovs --conntrack` on a real Open vSwitch (private daemons, dummy
// datapath, UDP packets injected): clients keep UDP flows to a Service's ClusterIP and
// NodePort (one conntrack entry each, in the pipeline's zone 65520); one endpoint is
// removed. After the diff's bundle alone, the flows sent to the removed endpoint keep
// their entries and a further packet of such a flow still goes there (its entry says so);
// after the script, exactly those entries are gone (the others stay), and the next packet
// of the same flow goes to a remaining endpoint. A Service whose endpoints go from none to
// some gets its command as well, and every IPv6 command is one OVS takes.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../helpers/diff-nft.js';
import { kproxc } from '../helpers/kproxc.js';
import { applyBundle, compileBundle, dumps } from '../helpers/ovs-diff.js';
import { sleepMs, startOvs, type Ovs } from '../helpers/ovs.js';
import { oneNodeListHead } from '../helpers/conntrack-snapshot.js';

const NODE = '192.168.1.1';
const DNS = { ip: '10.96.0.10', port: 53, nodePort: 30053, endpoints: ['10.180.0.1', '10.180.0.2'] };
const LATE = { ip: '10.96.0.20', endpoint: '10.180.0.3' };
const CLIENT = '10.1.0.5';
const ETH = 'eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02)';

function snapshot(dnsEndpoints: string[], lateEndpoints: string[]): string {
  const slice = (svc: string, ips: string[]) => `
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: ${svc}-1, namespace: kube-system, labels: {kubernetes.io/service-name: ${svc}}}
  addressType: IPv4
  ports: [{name: dns, port: 5353, protocol: UDP}]
  endpoints: [${ips.map((ip) => `{addresses: [${ip}], conditions: {ready: true}, nodeName: node-1}`).join(', ')}]`;
  return `${oneNodeListHead(NODE)}
- apiVersion: v1
  kind: Service
  metadata: {name: dns, namespace: kube-system}
  spec: {type: NodePort, clusterIP: ${DNS.ip}, clusterIPs: [${DNS.ip}], ipFamilies: [IPv4], ports: [{name: dns, port: ${DNS.port}, protocol: UDP, targetPort: 5353, nodePort: ${DNS.nodePort}}]}
${slice('dns', dnsEndpoints)}
- apiVersion: v1
  kind: Service
  metadata: {name: late, namespace: kube-system}
  spec: {type: ClusterIP, clusterIP: ${LATE.ip}, clusterIPs: [${LATE.ip}], ipFamilies: [IPv4], ports: [{name: dns, port: ${DNS.port}, protocol: UDP, targetPort: 5353}]}
${lateEndpoints.length ? slice('late', lateEndpoints) : ''}
`;
}

function udp(dst: string, sport: number, dport: number): string {
  return `in_port(1),${ETH},eth_type(0x0800),ipv4(src=${CLIENT},dst=${dst},proto=17,tos=0,ttl=64,frag=no),udp(src=${sport},dst=${dport})`;
}

interface Entry {
  dst: string;
  sport: number;
  dport: number;
  /** The reply source: the endpoint the entry translates to. */
  reply: string;
}

/** The client's UDP entries in the DNAT zone. */
function entries(ovs: Ovs): Entry[] {
  const out: Entry[] = [];
  for (const line of ovs.appctl(['dpctl/dump-conntrack', 'zone=65520']).split('\n')) {
    const m = /^udp,orig=\(src=([^,]+),dst=([^,]+),sport=(\d+),dport=(\d+)\),reply=\(src=([^,]+),/.exec(line);
    if (m && m[1] === CLIENT) out.push({ dst: m[2], sport: Number(m[3]), dport: Number(m[4]), reply: m[5] });
  }
  return out.sort((a, b) => a.dport - b.dport || a.sport - b.sport);
}

const key = (e: Entry) => `${e.dst}:${e.dport}<-${e.sport}`;

let ovs: (Ovs & { stop(): void }) | undefined;
let dir = '';
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

beforeAll(() => {
  ovs = startOvs({ tag: 'ct' });
  dir = tempDir('ovs-ct');
  // The script calls plain `ovs-appctl`; this instance's control socket is not where
  // ovs-appctl looks by default, so a wrapper first on PATH names it.
  fs.mkdirSync(path.join(dir, 'bin'));
  const wrapper = path.join(dir, 'bin', 'ovs-appctl');
  const real = spawnSync('sh', ['-c', 'command -v ovs-appctl'], { encoding: 'utf8', env: ovs.env }).stdout.trim();
  fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${real} -t ${ovs.dir}/ovs-vswitchd.ctl "$@"\n`);
  fs.chmodSync(wrapper, 0o755);
});

afterAll(() => {
  ovs?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const SPORTS = Array.from({ length: 12 }, (_, i) => 40000 + i);
let before: Entry[] = [];
let gone = '';
let script = '';

it('under the first snapshot: the flows spread over both endpoints, one entry each; the Service without endpoints leaves none', async () => {
  const o = ovs!;
  applyBundle(o, await compileBundle(file('a.yaml', snapshot(DNS.endpoints, []))));
  o.receive('p1', [...SPORTS.map((s) => udp(DNS.ip, s, DNS.port)), ...SPORTS.map((s) => udp(NODE, s, DNS.nodePort)), udp(LATE.ip, 41000, DNS.port)]);
  for (let i = 0; i < 100 && entries(o).length < 2 * SPORTS.length; i++) sleepMs(20);
  before = entries(o);
  expect(before.length).toBe(2 * SPORTS.length);
  expect(new Set(before.map((e) => e.reply))).toEqual(new Set(DNS.endpoints));
  expect(before.filter((e) => e.dst === LATE.ip), 'rejected to the controller: nothing committed').toEqual([]);
  gone = before[0].reply;
});

it('kproxc diff --backend ovs --conntrack: a command per destination of the removed endpoint, and one for the Service that gains endpoints', async () => {
  const o = ovs!;
  const d = dumps(o);
  const out = path.join(dir, 'conntrack.sh');
  const r = await kproxc([
    'diff', '--backend', 'ovs', '--live-flows', file('flows.txt', d.flows), '--live-groups', file('groups.txt', d.groups),
    file('b.yaml', snapshot(DNS.endpoints.filter((e) => e !== gone), [LATE.endpoint])), '--conntrack', out, '-o', path.join(dir, 'b.ofctl'),
  ]);
  expect(r.code, r.stderr).toBe(0);
  script = fs.readFileSync(out, 'utf8');
  expect(script.split('\n').filter((l) => !l.startsWith('#') && l !== '')).toEqual([
    `ovs-appctl dpctl/flush-conntrack zone=65520 ct_nw_proto=17,ct_nw_dst=${DNS.ip},ct_tp_dst=${DNS.port} ct_nw_src=${gone}`,
    `ovs-appctl dpctl/flush-conntrack zone=65520 ct_nw_proto=17,ct_tp_dst=${DNS.nodePort} ct_nw_src=${gone}`,
    `ovs-appctl dpctl/flush-conntrack zone=65520 ct_nw_proto=17,ct_nw_dst=${LATE.ip},ct_tp_dst=${DNS.port} ct_nw_src=${LATE.ip}`,
  ]);
});

it('after the bundle alone, the flows of the removed endpoint still go there: their packets pass and their entries stay as they were', () => {
  const o = ovs!;
  applyBundle(o, fs.readFileSync(path.join(dir, 'b.ofctl'), 'utf8'));
  o.appctl(['revalidator/wait']);
  const stale = before.filter((e) => e.reply === gone);
  expect(stale.length).toBeGreaterThan(0);
  o.receive('p1', stale.map((e) => udp(e.dst, e.sport, e.dport)));
  sleepMs(100);
  expect(entries(o)).toEqual(before);
});

it('after the script, exactly the entries of the removed endpoint are gone, and their next packet goes to a remaining endpoint', () => {
  const o = ovs!;
  const ran = spawnSync('sh', [path.join(dir, 'conntrack.sh')], { encoding: 'utf8', timeout: 30_000, env: { ...o.env, PATH: `${path.join(dir, 'bin')}:${o.env.PATH ?? ''}` } });
  expect(ran.status, ran.stderr).toBe(0);
  expect(ran.stderr).toBe('');
  const kept = before.filter((e) => e.reply !== gone);
  expect(entries(o)).toEqual(kept);
  const stale = before.filter((e) => e.reply === gone);
  o.receive('p1', stale.map((e) => udp(e.dst, e.sport, e.dport)));
  for (let i = 0; i < 100 && entries(o).length < before.length; i++) sleepMs(20);
  const now = entries(o);
  expect(now.map(key)).toEqual(before.map(key));
  expect(new Set(now.map((e) => e.reply))).toEqual(new Set(DNS.endpoints.filter((e) => e !== gone)));
});

it('IPv6 commands: OVS takes them (the same syntax with ct_ipv6_dst and ct_ipv6_src)', () => {
  const o = ovs!;
  o.appctl(['dpctl/flush-conntrack', 'zone=65510', 'ct_nw_proto=17,ct_ipv6_dst=fd00:30::10,ct_tp_dst=53', 'ct_ipv6_src=fd00:10:180::2']);
  o.appctl(['dpctl/flush-conntrack', 'zone=65510', 'ct_nw_proto=17,ct_tp_dst=30053', 'ct_ipv6_src=fd00:10:180::2']);
  // Nothing matched in zone 65510: the IPv4 entries stay.
  expect(entries(o).length).toBe(before.length);
});
