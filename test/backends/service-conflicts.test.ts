// Two Service ports claiming one destination: both backends settle it by one rule (the first
// in name order owns it whole), warn with the same words, fail --strict, and serve the owner
// for packets from outside and from the node alike.
import { describe, expect, it } from 'vitest';
import { resolveClaims } from '../../src/backends/claims.js';
import { loadModel } from '../../src/compile.js';
import type { Diagnostic } from '../../src/diag/diagnostic.js';
import { summarize } from '../../src/trace/result.js';
import { CLAIMED, CONFLICTS_FILE, NODE, OUTSIDE } from '../helpers/conflicts.js';
import { kproxc } from '../helpers/kproxc.js';
import { packetOf, tracerFor } from '../helpers/trace.js';

const HEAD = `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
`;

function svc(name: string, spec: string, ports = '[{name: p, port: 80}]'): string {
  return `---\napiVersion: v1\nkind: Service\nmetadata: {namespace: ns, name: ${name}}\nspec:\n${spec}\n  ports: ${ports}\n`;
}

function claimWarnings(text: string): string[] {
  const model = loadModel([{ name: 'x.yaml', text }], {});
  const warnings: Diagnostic[] = [];
  const owned: boolean[] = [];
  for (const m of model.families) {
    const claims = resolveClaims(m, warnings);
    for (const sp of m.servicePorts) for (const ip of sp.externalIPs) owned.push(claims.owns(sp, 'external IP', ip));
  }
  return [...warnings.map((w) => `${w.object}: ${w.message}`), `external IPs owned: ${owned.join(',')}`];
}

describe('the claim rule', () => {
  it('the first Service port in name order wins, whichever has endpoints', () => {
    expect(claimWarnings(HEAD + svc('b', '  clusterIP: 10.96.0.2\n  externalIPs: [192.0.2.1]') + svc('a', '  clusterIP: 10.96.0.1\n  externalIPs: [192.0.2.1]'))).toEqual([
      'ns/b: external IP 192.0.2.1 TCP port 80 is also the external IP of ns/a:p/TCP, which comes first in name order and serves it; ns/b:p/TCP gets no rule for it',
      'external IPs owned: true,false',
    ]);
  });

  it('another port or protocol on the same address is no conflict', () => {
    const text = HEAD + svc('a', '  clusterIP: 10.96.0.1\n  externalIPs: [192.0.2.1]') + svc('b', '  clusterIP: 10.96.0.2\n  externalIPs: [192.0.2.1]', '[{name: p, port: 81}, {name: u, port: 80, protocol: UDP}]');
    expect(claimWarnings(text)).toEqual(['external IPs owned: true,true,true']);
  });

  it("a Service's own external IP that is also its load-balancer IP asks for one verdict: no conflict", () => {
    const spec = '  type: LoadBalancer\n  clusterIP: 10.96.0.1\n  externalIPs: [192.0.2.1]';
    const text = HEAD + svc('a', spec, '[{name: p, port: 80, nodePort: 30080}]') + 'status: {loadBalancer: {ingress: [{ip: 192.0.2.1}]}}\n';
    expect(claimWarnings(text)).toEqual(['external IPs owned: true']);
  });

  it("a Service's external IP equal to its own ClusterIP is served as the ClusterIP", () => {
    expect(claimWarnings(HEAD + svc('a', '  clusterIP: 10.96.0.1\n  externalIPs: [10.96.0.1]'))).toEqual([
      'ns/a: external IP 10.96.0.1 TCP port 80 is also the ClusterIP of this Service port; it is served as the ClusterIP, and the external IP gets no rule for it',
      'external IPs owned: false',
    ]);
  });

  it('each IP family settles its own NodePorts and says which it is', () => {
    const spec = (ip4: string, ip6: string) => `  type: NodePort\n  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4, IPv6]\n  clusterIP: ${ip4}\n  clusterIPs: [${ip4}, ${ip6}]`;
    const ports = '[{name: p, port: 80, nodePort: 30080}]';
    const text = HEAD + svc('a', spec('10.96.0.1', 'fd00::1'), ports) + svc('b', spec('10.96.0.2', 'fd00::2'), ports);
    expect(claimWarnings(text).filter((w) => w.includes('NodePort'))).toEqual([
      'ns/b: NodePort TCP 30080 (IPv4) is also the NodePort of ns/a:p/TCP, which comes first in name order and serves it; ns/b:p/TCP gets no rule for it',
      'ns/b: NodePort TCP 30080 (IPv6) is also the NodePort of ns/a:p/TCP, which comes first in name order and serves it; ns/b:p/TCP gets no rule for it',
    ]);
  });
});

describe('both backends on fixtures/service-conflicts.yaml', () => {
  it('warn with the same words, one warning per lost claim, and compile', async () => {
    const nft = await kproxc(['compile', CONFLICTS_FILE]);
    const ovs = await kproxc(['compile', '--backend', 'ovs', CONFLICTS_FILE]);
    expect([nft.code, ovs.code]).toEqual([0, 0]);
    expect(ovs.stderr).toBe(nft.stderr);
    const lines = nft.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    for (const l of lines) expect(l).toMatch(/: Service shared\/[bdfh]-\w+: warning: .* is also the .* of shared\/[aceg]-\w+:http\/TCP, which comes first in name order and serves it; shared\/[bdfh]-\w+:http\/TCP gets no rule for it$/);
  });

  for (const args of [['compile'], ['compile', '--backend', 'ovs'], ['trace', '--src', OUTSIDE, '--dst', '192.0.2.50', '--dport', '80'], ['trace', '--backend', 'ovs', '--src', OUTSIDE, '--dst', '192.0.2.50', '--dport', '80']]) {
    it(`fail with --strict: ${args.join(' ')}`, async () => {
      const r = await kproxc([...args, CONFLICTS_FILE, '--strict']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/Service shared\/d-external: external IP 192\.0\.2\.50 TCP port 80 is also the external IP of shared\/c-external:http\/TCP/);
      expect(r.stderr).not.toMatch(/warning:/);
    });
  }

  for (const backend of ['nftables', 'ovs'] as const) {
    it(`${backend}: the owner serves packets from outside and from the node alike`, () => {
      const tracer = tracerFor(CONFLICTS_FILE, [], backend);
      for (const c of CLAIMED) {
        for (const src of [OUTSIDE, NODE]) {
          const s = summarize(tracer.trace(packetOf({ sourceIP: src, destIP: c.dst, destPort: c.port, fromNode: src === NODE })));
          const want = c.endpoints.length ? { verdict: 'dnat', endpoints: c.endpoints } : { verdict: 'reject', endpoints: [] };
          expect({ verdict: s.verdict, endpoints: [...s.endpoints].sort() }, `${c.what}, from ${src}`).toEqual(want);
        }
      }
    });
  }

  it('the loser keeps the destinations nobody else claims (its ClusterIP)', () => {
    const tracer = tracerFor(CONFLICTS_FILE);
    const s = summarize(tracer.trace(packetOf({ sourceIP: OUTSIDE, destIP: '172.30.0.13', destPort: 80 })));
    expect({ verdict: s.verdict, endpoints: s.endpoints }).toEqual({ verdict: 'dnat', endpoints: ['10.180.0.2:80'] });
  });
});
