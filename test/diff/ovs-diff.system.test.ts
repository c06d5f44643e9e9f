// kproxc diff --backend ovs on a real Open vSwitch (private daemons, dummy datapath, real
// packets injected): a bridge loaded with snapshot A learns affinity from real
// connections; the diff to B, applied, leaves exactly what a fresh load of B holds plus
// the learned flows of endpoints that remain, and a client with affinity keeps its
// endpoint. Then B -> C -> D -> E: Services added and removed, ports changed, endpoints
// moved, and a group past 700 buckets grown and shrunk; each step re-diffs empty.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshot, type Cluster, type Service } from '../helpers/cluster-changes.js';
import { applyBundle, bridgeForSuite, compileBundle, diffTo, dumps, learned, owned, stepTo } from '../helpers/ovs-diff.js';
import { eventually, type Ovs } from '../helpers/ovs.js';

const ETH = 'eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02)';
const VIP = '10.96.0.10';

function syn(client: string, sport: number): string {
  return `in_port(1),${ETH},eth_type(0x0800),ipv4(src=${client},dst=${VIP},proto=6,tos=0,ttl=64,frag=no),tcp(src=${sport},dst=80),tcp_flags(syn)`;
}

/** The endpoint (reply source) of each tracked connection of the client to the VIP. */
function chosen(ovs: Ovs, client: string): string[] {
  const out: string[] = [];
  for (const line of ovs.appctl(['dpctl/dump-conntrack']).split('\n')) {
    const m = /^tcp,orig=\(src=([^,]+),dst=([^,]+),sport=\d+,dport=80\),reply=\(src=([^,]+),/.exec(line);
    if (m && m[1] === client && m[2] === VIP) out.push(m[3]);
  }
  return out;
}

const ep = (i: number, local = false) => ({ ip: `10.128.1.${i}`, local });
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ ip: `10.129.${i >> 8}.${i & 255}`, local: i % 3 === 0 }));

function svc(name: string, i: number, over: Partial<Service> = {}): Service {
  return {
    ns: 'shop',
    name,
    clusterIP: `10.96.0.${i}`,
    type: 'ClusterIP',
    ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }],
    externalLocal: false,
    endpoints: [],
    ...over,
  };
}

const cluster = (services: Service[]): Cluster => ({ services, next: { service: 0, pod: 0, nodePort: 0, lb: 0 } });

const STICKY = (eps: number[]) => svc('sticky', 10, { affinity: 600, endpoints: eps.map((i) => ep(i)) });
const WEB = svc('web', 20, { type: 'NodePort', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }], endpoints: [ep(20, true), ep(21)] });
const DNS = svc('dns', 30, { ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 }], endpoints: [ep(30), ep(31)] });
const CLIENTS = Array.from({ length: 8 }, (_, i) => `198.18.0.${i + 1}`);

describe('kproxc diff --backend ovs on a real bridge', () => {
  const bridge = bridgeForSuite('ovs');
  const write = (name: string, c: Cluster) => {
    const file = path.join(bridge.dir, `${name}.yaml`);
    fs.writeFileSync(file, snapshot(c));
    return file;
  };

  it('A -> B keeps the learned flows of remaining endpoints, drops the others, and the client keeps its endpoint', async () => {
    const o = bridge.ovs;
    applyBundle(o, await compileBundle(write('a', cluster([STICKY([1, 2, 3, 4]), WEB, DNS]))));
    for (const [i, c] of CLIENTS.entries()) o.receive('p1', [syn(c, 41000 + i)]);
    const before = eventually(() => learned(dumps(o)), (l) => l.length >= CLIENTS.length);
    expect(before.length).toBe(CLIENTS.length);
    const picks = CLIENTS.map((c) => eventually(() => chosen(o, c), (e) => e.length >= 1)[0]);
    // B removes an endpoint some client learned, not the first client's; and DNS goes, a Service comes.
    const gone = picks.find((p) => p !== picks[0]);
    expect(gone, 'the clients spread over more than one endpoint').toBeDefined();
    const remaining = [1, 2, 3, 4].filter((i) => `10.128.1.${i}` !== gone);
    const { bundle } = await diffTo(bridge.dir, write('b', cluster([STICKY(remaining), WEB, svc('cart', 40, { endpoints: [ep(40)] })])), dumps(o));
    expect(bundle).not.toMatch(/^flow delete$|group_id=all/m);
    applyBundle(o, bundle);
    applyBundle(o, await compileBundle(path.join(bridge.dir, 'b.yaml')), 'br-fresh');
    expect(owned(dumps(o))).toEqual(owned(dumps(o, 'br-fresh')));

    const goneHex = (gone as string).split('.').reduce((n, x) => n * 256 + Number(x), 0).toString(16);
    const kept = before.filter((l) => !l.includes(`set_field:0x${goneHex}->reg3`));
    expect(kept.length).toBeLessThan(before.length);
    expect(kept.length).toBeGreaterThan(0);
    expect(learned(dumps(o))).toEqual(kept);

    o.appctl(['revalidator/wait']);
    o.receive('p1', [syn(CLIENTS[0], 42000)]);
    const after = eventually(() => chosen(o, CLIENTS[0]), (e) => e.length >= 2);
    expect(new Set(after)).toEqual(new Set([picks[0]]));
  });

  it('B -> C -> D -> E: Services come and go, ports change, endpoints move, a large group grows and shrinks', async () => {
    const o = bridge.ovs;
    const big = (n: number) => svc('big', 50, { endpoints: many(n) });
    const c = cluster([STICKY([1, 2]), { ...WEB, endpoints: [ep(20), ep(21, true), ep(22)] }, svc('cart', 40, { endpoints: [ep(40)] }), big(750)]);
    const cBundle = await stepTo(o, bridge.dir, write('c', c));
    expect(cBundle).toMatch(/^group insert_bucket /m);
    const d = cluster([
      STICKY([2, 5]),
      { ...WEB, ports: [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 8080, nodePort: 30081 }] },
      svc('orders', 60, { type: 'NodePort', ports: [{ name: 'grpc', port: 9000, protocol: 'TCP', targetPort: 9000, nodePort: 30090 }], endpoints: [ep(60, true)] }),
      big(900),
    ]);
    const dBundle = await stepTo(o, bridge.dir, write('d', d));
    expect(dBundle).toMatch(/^group add_or_mod group_id=\d+,type=select/m);
    expect(dBundle).toMatch(/^group delete group_id=/m);
    const e = cluster([STICKY([2, 5]), big(720)]);
    await stepTo(o, bridge.dir, write('e', e));
    // The group rewritten as 360 + 360 buckets selects from both shares (OVS 3.1 builds a
    // select group's hash from the inserted buckets alone when they are few: see
    // docs/ovs-backend.md), traced over many source ports.
    const reached = new Set<number>();
    for (let p = 0; p < 80; p++) {
      const t = o.trace(`tcp,in_port=1,nw_src=198.18.1.1,nw_dst=10.96.0.50,tcp_src=${40000 + p},tcp_dst=80`);
      const m = /nat\(dst=10\.129\.(\d+)\.(\d+):8080\)/.exec(t);
      if (m) reached.add(Number(m[1]) * 256 + Number(m[2]));
    }
    expect(reached.size).toBeGreaterThan(20);
    expect([...reached].some((i) => i < 360)).toBe(true);
    expect([...reached].some((i) => i >= 360 && i < 720)).toBe(true);
  });

  it('an unchanged bridge gives an empty bundle, and --exit-code says so', async () => {
    const r = await diffTo(bridge.dir, path.join(bridge.dir, 'e.yaml'), dumps(bridge.ovs), ['--exit-code']);
    expect(r).toEqual({ bundle: '', stderr: '', code: 0 });
  });
});
