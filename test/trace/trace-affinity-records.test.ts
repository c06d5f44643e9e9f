// fast-load's IPv4 affinity, recorded after NAT (fast-load/affinity-records.ts), in the cases
// the layouts' comparison over derived packets rarely meets: a Service address on the port
// of a recorded NodePort, and a connection the node makes to its own address, which passes
// the hooks after NAT twice (output, then prerouting after loopback).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kproxc, ROOT } from '../helpers/kproxc.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-records-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// fixtures/affinity-records.yaml: svc1 (affinity, NodePort 3001 on every address), svc2
// (affinity, one endpoint), plain (no affinity, its ClusterIP on port 3001), hostnet
// (affinity, one of its two endpoints the node itself). And the same with NodePorts on the
// node's address alone and plain given that address as an external IP on port 3001, which
// takes the connections to the node's address at port 3001 before the NodePorts do.
const FIXTURE = path.join(ROOT, 'fixtures/affinity-records.yaml');
const file = path.join(tmp, 'cluster.yaml');
fs.writeFileSync(
  file,
  fs
    .readFileSync(FIXTURE, 'utf8')
    .replace('nodePortAddresses: [0.0.0.0/0]', 'nodePortAddresses: [192.168.0.2/32]')
    .replace('  clusterIP: 172.30.0.43\n', '  clusterIP: 172.30.0.43\n  externalIPs: [192.168.0.2]\n'),
);

interface Branch {
  endpoint?: string;
  affinity?: { set: string; key: string }[];
}

async function branches(args: string[], cluster = file): Promise<Branch[]> {
  const r = await kproxc(['trace', cluster, ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { branches: Branch[] }).branches;
}

describe('affinity recorded after NAT', () => {
  it('records nothing for a Service address on the port of a recorded NodePort: it was dispatched as that Service', async () => {
    const text = await kproxc(['compile', '--layout', 'fast-load', file]);
    // The addresses' rule returns before the NodePorts' rule could take the connection for svc1.
    expect(text.stdout).toMatch(/^\t192\.168\.0\.2 \. 3001 : return,?$/m);
    expect(text.stdout).toMatch(/^\t3001 : goto affinity-record-\S+-ns1\/svc1\/tcp\/p80,?$/m);
    for (const layout of ['kube-proxy', 'fast-load']) {
      const bs = await branches(['--src', '203.0.113.9', '--dst', '192.168.0.2', '--dport', '3001', '--layout', layout]);
      expect(bs.map((b) => b.endpoint)).toEqual(['10.180.0.9:3001']);
      expect(bs.map((b) => b.affinity ?? [])).toEqual([[]]);
    }
  });

  it('records the NodePort of a Service with affinity, under its port', async () => {
    // Without plain's external IP, which takes the NodePort's connections.
    const args = (layout: string) => ['--src', '203.0.113.9', '--dst', '192.168.0.2', '--dport', '3001', '--affinity', '10.180.0.2:80', '--layout', layout];
    const [kp, fl] = await Promise.all(['kube-proxy', 'fast-load'].map((layout) => branches(args(layout), FIXTURE)));
    // A client with affinity to 10.180.0.2 reaches it alone, and refreshes its member.
    expect(fl.map((b) => b.endpoint)).toEqual(['10.180.0.2:80']);
    expect(fl.map((b) => b.endpoint)).toEqual(kp.map((b) => b.endpoint));
    expect(fl[0].affinity).toHaveLength(1);
  });

  it('records NodePort connections where every address takes NodePorts, under the key the lookup for their endpoint reads', async () => {
    const text = (await kproxc(['compile', '--layout', 'fast-load', FIXTURE])).stdout;
    expect(text).toContain('meta l4proto tcp ct original ip daddr != 127.0.0.0/8 ct original proto-dst vmap @affinity-record-nodeports-tcp');
    // What each lookup reads, by the endpoint it DNATs to.
    const read = new Map([...text.matchAll(/^\t\tip saddr \. numgen random mod 1 offset (\d+) \. numgen random mod 1(?: offset (\d+))? @affinity meta l4proto tcp dnat to (\S+)$/gm)].map((m) => [m[3], `${m[1]} . ${m[2] ?? 0}`]));
    const bs = await branches(['--src', '203.0.113.9', '--dst', '192.168.0.2', '--dport', '3001', '--layout', 'fast-load'], FIXTURE);
    expect(bs.map((b) => b.endpoint).sort()).toEqual(['10.180.0.1:80', '10.180.0.2:80']);
    for (const b of bs) expect(b.affinity).toEqual([{ set: 'affinity', key: `203.0.113.9 . ${read.get(b.endpoint!)}` }]);
  });

  it("records a connection of the node to itself once, on output: back in through loopback it is confirmed", async () => {
    for (const layout of ['kube-proxy', 'fast-load']) {
      const bs = await branches(['--src', '192.168.0.2', '--dst', '172.30.0.44', '--dport', '80', '--from-node', '--layout', layout], FIXTURE);
      expect(bs.map((b) => b.endpoint).sort()).toEqual(['10.180.0.8:8080', '192.168.0.2:8080']);
      for (const b of bs) expect(b.affinity).toHaveLength(1);
    }
    const r = await kproxc(['trace', FIXTURE, '--src', '192.168.0.2', '--dst', '172.30.0.44', '--dport', '80', '--from-node', '--layout', 'fast-load']);
    expect(r.stdout).toMatch(/\[output\] affinity-record-\S+-ns4\/hostnet\/tcp\/p: update @affinity: 192\.168\.0\.2 \. \d+ \. \d+ is remembered for 10800s/);
    expect(r.stdout).toContain('[routing] 192.168.0.2 is a local address: postrouting, then back in through loopback');
    expect(r.stdout).not.toMatch(/\[prerouting\] (filter-prerouting-post-dnat|affinity-record)/);
  });
});
