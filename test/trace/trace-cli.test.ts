// The trace command: text and JSON output, --packets files, and bad usage or input (exit 2,
// a positioned diagnostic, nothing on standard output).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { golden, kindArgs } from '../helpers/fixtures.js';
import { kproxc, kproxcProcess, ROOT } from '../helpers/kproxc.js';
import { groupIDCandidate } from '../../src/backends/ovs/group-ids.js';

const OVERALL = 'test/trace/kube-proxy/overall.yaml';
/** The golden traces are of kube-proxy 1.35's table. */
const V135 = ['--kube-proxy-version', '1.35'];
const V6 = 'test/trace/kube-proxy/nodeports-v6.yaml';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-trace-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function packetsFile(name: string, text: string): string {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
}

/** kube-proxy's own overall snapshot sets healthCheckNodePort on a Cluster-policy Service: its only warning. */
const OVERALL_WARNING = /^test\/trace\/kube-proxy\/overall\.yaml:\d+:\d+: Service ns5\/svc5: spec\.healthCheckNodePort: warning: ignored: [^\n]*\n$/;

describe('kproxc trace: output', () => {
  it('prints the path in rule terms and the outcome', async () => {
    const r = await kproxc(['trace', OVERALL, ...V135, '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '80']);
    expect(r.stderr).toMatch(OVERALL_WARNING);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[prerouting] services: matched service-ips element 172.30.0.41 . tcp . 80 → goto service-ULMVA6XW-ns1/svc1/tcp/p80');
    expect(r.stdout).toContain('verdict: dnat 10.180.0.1:80; masquerade: no');
    expect(r.stdout).toBe(golden('trace/overall-clusterip.txt', r.stdout));
  });

  it('follows kube-proxy 1.36: a numgen DNAT map, and an endpoint reaching itself masqueraded through the hairpin set', async () => {
    const r = await kproxc(['trace', OVERALL, '--kube-proxy-version', '1.36', '--src', '10.180.0.5', '--dst', '172.30.0.44', '--dport', '80']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(golden('trace/overall-1.36-hairpin.txt', r.stdout));
    expect(r.stdout).toContain('ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random');
    expect(r.stdout).toContain('=> dnat to 10.180.0.5:80, masqueraded');
    expect(r.stdout).toContain('=> dnat to 10.180.0.4:80\n');
  });

  it('follows kube-proxy 1.37: a lone endpoint DNATed without a map', async () => {
    const r = await kproxc(['trace', OVERALL, '--kube-proxy-version', '1.37', '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '80']);
    expect(r.stdout).toContain('meta l4proto tcp dnat to 10.180.0.1:80');
    expect(r.stdout).toContain('verdict: dnat 10.180.0.1:80; masquerade: no');
  });

  it('shows every branch of a load-balanced Service', async () => {
    const r = await kproxc(['trace', OVERALL, ...V135, '--src', '203.0.113.2', '--dst', '192.168.99.33', '--dport', '80']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(golden('trace/overall-external-ip-two-endpoints.txt', r.stdout));
    expect(r.stdout).toContain('branch 2 of 2:');
  });

  it('traces a packet the node sends itself through output', async () => {
    const r = await kproxc(['trace', OVERALL, ...V135, '--src', '192.168.0.2', '--dst', '192.168.99.22', '--dport', '80', '--from-node']);
    expect(r.stdout).toBe(golden('trace/overall-node-to-local-policy-external-ip.txt', r.stdout));
    expect(r.stdout).toContain('[output] service-endpoints-check: matched no-endpoint-services element 192.168.99.22 . tcp . 80 → drop');
  });

  it('traces a packet from a node address as arriving unless --from-node is given', async () => {
    const r = await kproxc(['trace', OVERALL, '--src', '192.168.0.2', '--dst', '192.168.99.22', '--dport', '80', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'dnat', endpoints: ['10.180.0.2:80'], masquerade: true });
    const bad = await kproxc(['trace', OVERALL, '--src', '203.0.113.2', '--dst', '192.168.99.22', '--dport', '80', '--from-node']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an address of the node');
  });

  it('--json: one object per packet with verdict, endpoints, masquerade and path', async () => {
    const r = await kproxc(['trace', OVERALL, '--src', '203.0.113.2', '--dst', '192.168.0.2', '--dport', '3002', '--json']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const o = JSON.parse(lines[0]);
    expect(o).toMatchObject({ verdict: 'dnat', endpoints: ['10.180.0.3:80'], masquerade: true });
    expect(o.packet).toEqual({ protocol: 'tcp', sourceIP: '203.0.113.2', sourcePort: 40000, destIP: '192.168.0.2', destPort: 3002 });
    expect(o.path.some((s: { action: string }) => s.action === 'matched service-nodeports element tcp . 3002 → goto external-HVFWP5L3-ns5/svc5/tcp/p80')).toBe(true);
    expect(o.branches).toHaveLength(1);
  });

  it('--packets traces many packets; IPv6 endpoints print as [ip]:port', async () => {
    const f = packetsFile(
      'many.json',
      JSON.stringify([
        { sourceIP: '2600:5200::1', destIP: '2001:db8::1', destPort: 3001, protocol: 'TCP' },
        { sourceIP: 'fd00:10::2', destIP: 'fd00:172:30::41', destPort: 80 },
        { sourceIP: '2600:5200::1', destIP: '2001:db8::1', destPort: 3001, protocol: 'udp' },
        { sourceIP: '203.0.113.2', destIP: '192.168.0.2', destPort: 3001 },
      ]),
    );
    const r = await kproxc(['trace', V6, '--packets', f, '--json']);
    expect(r.stderr).toBe('');
    const os_ = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(os_.map((o) => [o.verdict, o.endpoints, o.masquerade])).toEqual([
      ['dnat', ['[fd00:10:180::1]:80', '[fd00:10:180::2:1]:80'], true],
      ['dnat', ['[fd00:10:180::1]:80', '[fd00:10:180::2:1]:80'], false],
      ['none', [], false],
      ['none', [], false],
    ]);
    expect(os_[3].path[0].action).toMatch(/no ip table/);
  });

  it('--iif makes a packet arrive on that interface', async () => {
    const r = await kproxc(['trace', OVERALL, '--src', '192.168.0.2', '--dst', '192.168.99.22', '--dport', '80', '--iif', 'eth1', '--json']);
    const o = JSON.parse(r.stdout);
    expect(o.origin).toMatch(/^arriving on eth1/);
    expect(o).toMatchObject({ verdict: 'dnat', endpoints: ['10.180.0.2:80'], masquerade: true });
  });

  it('works as a real process', () => {
    const r = kproxcProcess(['trace', OVERALL, '--src', '10.0.0.2', '--dst', '172.30.0.46', '--dport', '80', '--json']);
    expect(r.stderr).toMatch(OVERALL_WARNING);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'reject', endpoints: [], masquerade: false });
  });
});

describe('kproxc trace --backend ovs', () => {
  const EXAMPLE = 'examples/cluster.yaml';
  it('walks the compiled flows: tables, the select group forked per bucket, conntrack', async () => {
    const r = await kproxc(['trace', EXAMPLE, '--backend', 'ovs', '--proto', 'udp', '--src', '203.0.113.9', '--dst', '10.96.0.10', '--dport', '53']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`[table 15] ServiceLB: matched ClusterIP 10.96.0.10 udp 53 of kube-system/kube-dns:dns/UDP → group ${groupIDCandidate(4, 'kube-system/kube-dns:dns/UDP/cluster', 0)} (select, 2 buckets)\n`);
    expect(r.stdout).toBe(golden('trace/ovs-example-dns.txt', r.stdout));
  });
  it('--packets and --json: one object per packet, in the nftables tracer\'s shape', async () => {
    const f = packetsFile(
      'ovs.json',
      JSON.stringify([
        { sourceIP: '203.0.113.9', destIP: '10.96.0.10', destPort: 53, protocol: 'UDP' },
        { sourceIP: '203.0.113.9', destIP: '10.96.12.30', destPort: 80 },
        { sourceIP: '203.0.113.9', destIP: '10.96.0.10', destPort: 54, protocol: 'UDP' },
        { sourceIP: '203.0.113.9', destIP: '10.96.200.200', destPort: 80 },
        { sourceIP: '203.0.113.9', destIP: '198.51.100.99', destPort: 80 },
      ]),
    );
    const r = await kproxc(['trace', EXAMPLE, '--backend', 'ovs', '--packets', f, '--json']);
    expect(r.code).toBe(0);
    const out = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(out.map((o) => [o.verdict, o.endpoints, o.masquerade])).toEqual([
      ['dnat', ['10.244.1.3:53', '10.244.2.7:53'], false],
      ['reject', [], false],
      // A ClusterIP's unused port and an unallocated ServiceCIDR address, as the nftables
      // backend treats them; an address outside the ServiceCIDRs passes.
      ['reject', [], false],
      ['drop', [], false],
      ['none', [], false],
    ]);
    expect(out[0]).toMatchObject({ origin: 'arriving at the bridge from outside the node: table 0', path: expect.any(Array), branches: expect.any(Array) });
  });
});

describe('kproxc trace: bad usage and input', () => {
  const bad = async (args: string[]) => {
    const r = await kproxc(['trace', ...args]);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    return r.stderr;
  };
  it('--backend ovs --from-node wants a node address', async () => {
    expect(await bad(['examples/cluster.yaml', '--backend', 'ovs', '--src', '10.0.0.2', '--dst', '10.96.0.10', '--dport', '53', '--from-node'])).toBe(
      'kproxc: --from-node: the source 10.0.0.2 is not an address of the node\n',
    );
  });
  it('needs a packet', async () => {
    expect(await bad([OVERALL, '--src', '10.0.0.2'])).toBe('kproxc: trace needs --dst, --dport (or --packets FILE)\n');
  });
  it('checks the flags', async () => {
    expect(await bad([OVERALL, '--src', '10.0.0.300', '--dst', '172.30.0.41', '--dport', '80'])).toMatch(/--src: "10.0.0.300" is not a valid IP/);
    expect(await bad([OVERALL, '--src', '10.0.0.2', '--dst', 'fd00::1', '--dport', '80'])).toMatch(/one IP family/);
    expect(await bad([OVERALL, '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '0'])).toMatch(/--dport: must be a whole number from 1 to 65535/);
    expect(await bad([OVERALL, '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '80', '--proto', 'icmp'])).toMatch(/icmp/);
    expect(await bad([OVERALL, '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '80', '--iif', 'a/b'])).toMatch(/--iif/);
  });
  it('--family of the other IP family than the packet blames the flag and --dst, not the snapshot', async () => {
    // The snapshot has both families: only the flag leaves the packet's rules out.
    const DUAL = 'fixtures/dual-stack.yaml';
    for (const backend of ['nftables', 'ovs']) {
      expect(await bad([DUAL, '--backend', backend, '--family', 'ipv6', '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '80'])).toBe(
        'kproxc: --dst 172.30.0.41 is an IPv4 address, but --family ipv6 compiles IPv6 rules only: leave out --family, or trace an IPv6 destination\n',
      );
      expect(await bad([DUAL, '--backend', backend, '--family', 'ipv4', '--src', 'fd00::2', '--dst', 'fd00:10:96::41', '--dport', '80'])).toBe(
        'kproxc: --dst fd00:10:96::41 is an IPv6 address, but --family ipv4 compiles IPv4 rules only: leave out --family, or trace an IPv4 destination\n',
      );
    }
    const f = packetsFile('v4.json', '[{"sourceIP": "10.0.0.2", "destIP": "172.30.0.41", "destPort": 80}]');
    expect(await bad([DUAL, '--family', 'ipv6', '--packets', f])).toBe(
      `${f}:1:37: [0].destIP: is an IPv4 address, but --family ipv6 compiles IPv6 rules only: leave out --family, or trace an IPv6 destination\n`,
    );
    // The matching family traces as usual.
    const ok = await kproxc(['trace', DUAL, '--family', 'ipv6', '--src', 'fd00::2', '--dst', 'fd00:10:96::41', '--dport', '80']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^verdict: dnat /m);
  });
  it('refuses --packets with packet flags', async () => {
    const f = packetsFile('one.json', '[{"sourceIP": "10.0.0.2", "destIP": "172.30.0.41", "destPort": 80}]');
    expect(await bad([OVERALL, '--packets', f, '--src', '10.0.0.2'])).toBe('kproxc: --packets cannot be combined with --src\n');
  });
  it('reports every problem of a packets file with its position', async () => {
    const f = packetsFile(
      'bad.json',
      [
        '[',
        '  {"sourceIP": "10.0.0.2", "destIP": "172.30.0.41", "destPort": 80},',
        '  {"sourceIP": "10.0.0.256", "destIP": "172.30.0.41", "destPort": 70000},',
        '  {"sourceIP": "10.0.0.2", "destIP": "fd00::1", "destport": 80, "protocol": "icmp"}',
        ']',
      ].join('\n'),
    );
    const err = await bad([OVERALL, '--packets', f]);
    expect(err.split('\n').filter(Boolean)).toEqual([
      `${f}:3:16: [1].sourceIP: "10.0.0.256" is not a valid IP address`,
      `${f}:3:67: [1].destPort: must be a whole number from 1 to 65535`,
      `${f}:4:3: [2].destPort: required field is missing`,
      `${f}:4:38: [2].destIP: is an IPv6 address but sourceIP is IPv4`,
      `${f}:4:61: [2].destport: unknown field (known: sourceIP, destIP, destPort, protocol, sourcePort, iif, fromNode, affinity)`,
      `${f}:4:77: [2].protocol: must be one of TCP, UDP, SCTP`,
    ]);
  });
  it('a packets file that is not an array, or not JSON', async () => {
    expect(await bad([OVERALL, '--packets', packetsFile('obj.json', '{"sourceIP": "10.0.0.2"}')])).toMatch(/obj\.json:1:1: must be a non-empty array/);
    expect(await bad([OVERALL, '--packets', packetsFile('syntax.json', '[{"sourceIP": ')])).toMatch(/syntax\.json:\d+:\d+: invalid JSON/);
    expect(await bad([OVERALL, '--packets', path.join(tmp, 'missing.json')])).toMatch(/missing\.json:1:1: no such file or directory/);
  });
  it('a bad snapshot is reported as compile reports it', async () => {
    const err = await bad([path.join(ROOT, 'fixtures/_error_/bad-ip.yaml'), '--src', '10.0.0.2', '--dst', '172.30.0.41', '--dport', '80']);
    expect(err).toMatch(/bad-ip\.yaml:\d+:\d+: Service/);
  });
});

describe('kproxc trace --layout and --affinity', () => {
  const AFFINITY = 'fixtures/session-affinity.yaml';
  const svc1 = ['--src', '10.0.0.5', '--dst', '172.30.0.41', '--dport', '80'];
  const endpoints = (out: string) => (JSON.parse(out) as { endpoints: string[] }).endpoints;

  it('--layout fast-load walks the endpoint map and records the client after NAT: each endpoint is a branch, as in kube-proxy\'s layout', async () => {
    const kp = await kproxc(['trace', AFFINITY, ...svc1, '--json']);
    const fl = await kproxc(['trace', AFFINITY, ...svc1, '--json', '--layout', 'fast-load']);
    expect(fl.code).toBe(0);
    expect(endpoints(fl.stdout)).toEqual(['10.180.0.1:80', '10.180.0.2:80']);
    expect(endpoints(fl.stdout)).toEqual(endpoints(kp.stdout));
    // Each branch lists the affinity key written for its endpoint: the client first, in either layout's form.
    for (const out of [kp.stdout, fl.stdout]) {
      const branches = (JSON.parse(out) as { branches: { affinity?: { set: string; key: string }[] }[] }).branches;
      expect(branches.map((b) => b.affinity?.map((a) => a.key.split(' . ')[0]))).toEqual([['10.0.0.5'], ['10.0.0.5']]);
    }
    const text = await kproxc(['trace', AFFINITY, ...svc1, '--layout', 'fast-load']);
    expect(text.stdout).toMatch(/numgen random mod 2 picks one of endpoint-ips-[0-9a-f]{2}'s 2 elements: every branch is followed/);
    // Recorded after NAT, by the port's recording chain, once in each branch.
    expect(text.stdout.match(/\[prerouting\] affinity-record-\S+: update @affinity: 10\.0\.0\.5 \. \d+ \. \d+ is remembered for \d+s/g)).toHaveLength(2);
    expect(text.stdout).not.toContain('vmap {');
  });

  it('--affinity: a client that already has affinity goes to that endpoint only, in either layout, by every address of the Service', async () => {
    for (const kind of TABLE_KINDS) {
      for (const to of [['--dst', '172.30.0.41', '--dport', '80'], ['--dst', '192.168.0.2', '--dport', '3001']]) {
        const r = await kproxc(['trace', AFFINITY, '--src', '10.0.0.5', ...to, '--affinity', '10.180.0.2:80', ...kindArgs(kind), '--json']);
        expect(r.stderr).toBe('');
        expect(endpoints(r.stdout), `${kind.name} ${to.join(' ')}`).toEqual(['10.180.0.2:80']);
      }
    }
    const f = packetsFile('sticky.yaml', '- {sourceIP: 10.0.0.5, destIP: 172.30.0.41, destPort: 80, affinity: "10.180.0.1:80"}\n- {sourceIP: 10.0.0.5, destIP: 172.30.0.41, destPort: 80}\n');
    const many = await kproxc(['trace', AFFINITY, '--packets', f, '--json', '--layout', 'fast-load']);
    expect(many.stdout.trimEnd().split('\n').map(endpoints)).toEqual([['10.180.0.1:80'], ['10.180.0.1:80', '10.180.0.2:80']]);
  });

  it('refuses --layout and --affinity where they do not apply', async () => {
    const bad = async (args: string[]) => {
      const r = await kproxc(['trace', AFFINITY, ...args]);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(2);
      return r.stderr;
    };
    expect(await bad([...svc1, '--backend', 'ovs', '--layout', 'fast-load'])).toBe('kproxc: --layout does not apply to --backend ovs\n');
    expect(await bad([...svc1, '--layout', 'fast'])).toMatch(/--layout.*fast.*kube-proxy, fast-load/);
    expect(await bad([...svc1, '--backend', 'ovs', '--affinity', '10.180.0.1:80'])).toMatch(/--affinity applies to --backend nftables only/);
    expect(await bad([...svc1, '--affinity', '10.180.0.1'])).toBe('kproxc: --affinity: must be an endpoint IP:PORT ([IP]:PORT for IPv6)\n');
    expect(await bad([...svc1, '--affinity', '[fd00::1]:80'])).toBe('kproxc: --affinity: an IPv6 endpoint for an IPv4 packet\n');
    expect(await bad([...svc1, '--affinity', '10.180.0.9:80'])).toMatch(/^kproxc: --affinity 10\.180\.0\.9:80: no rule or endpoint chain of the compiled rules DNATs to it/);
    const f = packetsFile('bad-affinity.json', '[{"sourceIP": "10.0.0.5", "destIP": "172.30.0.41", "destPort": 80, "affinity": "10.180.0.1"}]');
    expect(await bad(['--packets', f])).toBe(`${f}:1:80: [0].affinity: must be an endpoint "IP:PORT" ("[IP]:PORT" for IPv6)\n`);
    expect(await bad(['--packets', f, '--affinity', '10.180.0.1:80'])).toBe('kproxc: --packets cannot be combined with --affinity\n');
    const sticky = packetsFile('ovs-affinity.json', '[{"sourceIP": "10.0.0.5", "destIP": "172.30.0.41", "destPort": 80, "affinity": "10.180.0.1:80"}]');
    expect(await bad(['--packets', sticky, '--backend', 'ovs'])).toMatch(/--affinity applies to --backend nftables only/);
  });
});
