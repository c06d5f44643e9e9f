// ClientIP affinity with real packets on a real Open vSwitch (traces do not run learn
// actions; injected packets do): several connections from one client reach one endpoint,
// the learned flow carries the Service's timeout (capped at 65535), a Service without
// affinity spreads the same client's connections, and loading the bundle again flushes
// what was learned.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../../src/compile.js';
import { categorizeEndpoints } from '../../../src/model/categorize.js';
import { servicePortKey } from '../../../src/model/types.js';
import { GOLDEN, FIXTURES } from '../../helpers/fixtures.js';
import { eventually, startOvs, type Ovs } from '../../helpers/ovs.js';

const CASE = 'ovs/dual-stack-node';
const SNAPSHOT = path.join(FIXTURES, `${CASE}.yaml`);
const BUNDLE = fs.readFileSync(path.join(GOLDEN, `${CASE}.ovs`), 'utf8');

interface Conn {
  proto: 'tcp' | 'udp';
  client: string;
  vip: string;
  port: number;
}

const ETH = 'eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02)';

/** Datapath flow keys of `n` new connections from one client, source ports from `first`. */
function packets(c: Conn, n: number, first: number): string[] {
  const v6 = c.client.includes(':');
  const l3 = v6
    ? `eth_type(0x86dd),ipv6(src=${c.client},dst=${c.vip},label=0,proto=${c.proto === 'tcp' ? 6 : 17},tclass=0,hlimit=64,frag=no)`
    : `eth_type(0x0800),ipv4(src=${c.client},dst=${c.vip},proto=${c.proto === 'tcp' ? 6 : 17},tos=0,ttl=64,frag=no)`;
  const l4 = (sport: number) => (c.proto === 'tcp' ? `tcp(src=${sport},dst=${c.port}),tcp_flags(syn)` : `udp(src=${sport},dst=${c.port})`);
  return Array.from({ length: n }, (_, i) => `in_port(1),${ETH},${l3},${l4(first + i)}`);
}

/** The endpoint (reply source) of each tracked connection from the client to the VIP. */
function endpointsChosen(ovs: Ovs, c: Conn): string[] {
  const out: string[] = [];
  for (const line of ovs.appctl(['dpctl/dump-conntrack']).split('\n')) {
    const m = /^(\w+),orig=\(src=([^,]+),dst=([^,]+),sport=\d+,dport=(\d+)\),reply=\(src=([^,]+),dst=[^,]+,sport=(\d+),.*zone=(\d+)/.exec(line);
    if (!m || m[1] !== c.proto || m[2] !== c.client || m[3] !== c.vip || Number(m[4]) !== c.port) continue;
    out.push(c.client.includes(':') ? `[${m[5]}]:${m[6]}` : `${m[5]}:${m[6]}`);
  }
  return out;
}

/** The Service's cluster endpoints as the model categorises them. */
function expectedEndpoints(namespace: string, name: string, port: string, protocol: 'TCP' | 'UDP', family: 4 | 6): string[] {
  const model = loadModel([{ name: SNAPSHOT, text: fs.readFileSync(SNAPSHOT, 'utf8') }], {});
  const m = model.families.find((f) => f.family === family)!;
  const sp = m.servicePorts.find((s) => s.id.namespace === namespace && s.id.name === name && s.id.port === port && s.id.protocol === protocol)!;
  return categorizeEndpoints(m.endpoints.get(servicePortKey(sp.id)) ?? [], sp, m.nodeName, m.nodeLabels).clusterEndpoints.map((e) => e.key);
}

function learnedFlows(ovs: Ovs): string[] {
  return ovs.dump().flows.filter((f) => /^cookie=\S+ table=14, /.test(f) && !/ priority=0 /.test(f));
}

describe('ClientIP affinity with real packets', () => {
  let ovs: (Ovs & { stop(): void }) | undefined;
  beforeAll(() => {
    ovs = startOvs();
    ovs.loadBundle(BUNDLE);
  });
  afterAll(() => ovs?.stop());

  const cases: { what: string; conn: Conn; family: 4 | 6; timeout: number; match: RegExp }[] = [
    {
      what: 'IPv4 TCP',
      conn: { proto: 'tcp', client: '198.18.0.7', vip: '10.96.0.30', port: 80 },
      family: 4,
      timeout: 300,
      match: /priority=200,tcp,nw_src=198\.18\.0\.7,nw_dst=10\.96\.0\.30,tp_dst=80 actions=/,
    },
    {
      what: 'IPv6 TCP',
      conn: { proto: 'tcp', client: '2001:db8:ffff::7', vip: 'fd00:96::30', port: 80 },
      family: 6,
      timeout: 300,
      match: /priority=200,tcp6,ipv6_src=2001:db8:ffff::7,ipv6_dst=fd00:96::30,tp_dst=80 actions=/,
    },
  ];

  for (const c of cases) {
    it(`${c.what}: one client's connections stay on one endpoint, learned for ${c.timeout} s`, () => {
      ovs!.appctl(['dpctl/flush-conntrack']);
      // The first connection selects an endpoint and learns it. (Connections that arrive
      // together with it, before the learned flow exists, select on their own: see
      // docs/ovs-backend.md.)
      ovs!.receive('p1', packets(c.conn, 1, 41001));
      const learned = eventually(() => learnedFlows(ovs!).filter((f) => c.match.test(f)), (l) => l.length > 0);
      expect(learned.length).toBe(1);
      expect(learned[0]).toMatch(new RegExp(`hard_timeout=${c.timeout},`));
      expect(learned[0]).toMatch(/^cookie=0x103[0-9a-f]*[1-9a-f][0-9a-f]*,/); // the group's own cookie
      expect(learned[0]).not.toMatch(/^cookie=0x1030000000000,/);
      const first = eventually(() => endpointsChosen(ovs!, c.conn), (e) => e.length >= 1);
      expect(first.length).toBe(1);
      expect(expectedEndpoints('shop', 'sticky', 'http', 'TCP', c.family)).toContain(first[0]);

      // Datapath flows cached before the flow was learned are revalidated by OVS on its own;
      // wait for that, then every further connection of the client lands on the same endpoint.
      ovs!.appctl(['revalidator/wait']);
      ovs!.receive('p1', packets(c.conn, 12, 41002));
      const chosen = eventually(() => endpointsChosen(ovs!, c.conn), (e) => e.length >= 13);
      expect(chosen.length).toBe(13);
      expect(new Set(chosen)).toEqual(new Set(first));
    });
  }

  it('without affinity the same client is spread over the endpoints (the test can tell)', () => {
    const conn: Conn = { proto: 'tcp', client: '198.18.0.8', vip: '10.96.0.53', port: 53 };
    ovs!.appctl(['dpctl/flush-conntrack']);
    ovs!.receive('p1', packets(conn, 16, 43001));
    const chosen = eventually(() => endpointsChosen(ovs!, conn), (e) => e.length >= 16);
    expect(chosen.length).toBe(16);
    expect(new Set(chosen).size).toBeGreaterThan(1);
    for (const ep of chosen) expect(expectedEndpoints('kube-system', 'dns', 'dns-tcp', 'TCP', 4)).toContain(ep);
  });

  it('caps a timeout of 86400 s at the 65535 s a hard_timeout holds', () => {
    const conn: Conn = { proto: 'udp', client: '198.18.0.9', vip: '10.96.0.31', port: 80 };
    ovs!.receive('p1', packets(conn, 1, 44001));
    const learned = eventually(
      () => learnedFlows(ovs!).filter((f) => /udp,nw_src=198\.18\.0\.9,nw_dst=10\.96\.0\.31,tp_dst=80 /.test(f)),
      (l) => l.length > 0,
    );
    expect(learned.length).toBe(1);
    expect(learned[0]).toMatch(/hard_timeout=65535,/);
    ovs!.appctl(['revalidator/wait']);
    ovs!.receive('p1', packets(conn, 3, 44002));
    const chosen = eventually(() => endpointsChosen(ovs!, conn), (e) => e.length >= 4);
    expect(chosen.length).toBe(4);
    // (The userspace datapath hashes UDP without ports, so this alone would not prove
    // affinity; the learned flow above does.)
    expect(new Set(chosen).size).toBe(1);
  });

  it('loading the bundle again flushes the learned flows', () => {
    expect(learnedFlows(ovs!).length).toBeGreaterThan(0);
    ovs!.loadBundle(BUNDLE);
    expect(learnedFlows(ovs!)).toEqual([]);
  });
});
