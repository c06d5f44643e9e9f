// System test on a real Open vSwitch: for every golden bundle, packets to every Service
// address (ClusterIP, each NodePort address and the virtual NodePort IP, external IPs,
// load-balancer IPs), from outside and from a local Pod, are traced with ofproto/trace over
// every dp_hash value of the group they meet, so every bucket is seen. The endpoints they
// reach, or the controller, drop or pass they meet, must be exactly what the model says,
// and what `kproxc trace --backend ovs` says walking the same flows. A ClusterIP's unused
// port meets the controller and an unallocated ServiceCIDR address is dropped.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadModel } from '../../../src/compile.js';
import { compareIP, parseIP } from '../../../src/net/ip.js';
import { GOLDEN } from '../../helpers/fixtures.js';
import { ovsCases } from '../../helpers/ovs-cases.js';
import { probesFor, traceAllBuckets, walkedOutcome, type Outcome, type Probe } from '../../helpers/ovs-expect.js';
import { tracerFor } from '../../helpers/trace.js';
import { parseArgsToOptions } from '../../helpers/options.js';
import { ovsForSuite, type Ovs } from '../../helpers/ovs.js';

const SPORT = 40000;

/** The datapath's number for a port (datapath actions name ports by it, not by OpenFlow's). */
function dpPort(ovs: Ovs, name: string): string {
  return new RegExp(`port (\\d+): ${name}\\b`).exec(ovs.appctl(['dpctl/show']))![1];
}

/** Endpoint strings (`ip:port`, `[ip]:port`) in bucket order: by address, then port. */
function sortedByAddress(eps: string[]): string[] {
  const key = (e: string) => {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(e)!;
    return { ip: parseIP(m[1])!, port: Number(m[2]) };
  };
  return [...eps].sort((a, b) => compareIP(key(a).ip, key(b).ip) || key(a).port - key(b).port);
}

/** Every outcome of one probe over the dp_hash values (or source ports) that cover its group. */
function observe(ovs: Ovs, p: Probe): { outcome: Outcome; sampled: boolean } {
  const { traces } = traceAllBuckets(ovs, p, SPORT);
  const results = traces.map((t) => t.result);
  const first = results[0];
  const kinds = new Set(results.map((r) => r.outcome.kind));
  if (kinds.size !== 1) return { outcome: { kind: 'endpoints', endpoints: [`mixed: ${[...kinds].join(',')}`] }, sampled: false };
  if (first.outcome.kind !== 'endpoints') return { outcome: first.outcome, sampled: false };
  const eps = new Set(results.flatMap((r) => (r.outcome.kind === 'endpoints' ? r.outcome.endpoints : [])));
  return { outcome: { kind: 'endpoints', endpoints: [...eps].sort() }, sampled: first.fieldHash };
}

describe('traced packets reach exactly the endpoints the model gives', () => {
  const ovs = ovsForSuite();
  const covered: Probe[] = [];

  for (const c of ovsCases()) {
    it(c.name, () => {
      ovs().loadBundle(fs.readFileSync(path.join(GOLDEN, c.golden), 'utf8'));
      const model = loadModel([{ name: c.file, text: c.text }], parseArgsToOptions(c.args));
      const probes = model.families.flatMap(probesFor);
      expect(probes.length).toBeGreaterThan(0);
      covered.push(...probes.map((p) => ({ ...p, what: `${c.name}: ${p.what}` })));
      // The OpenFlow walker (kproxc trace --backend ovs) must see what OVS does, probe by probe.
      const tracer = tracerFor(c.file, [], 'ovs');
      for (const p of probes) {
        const seen = observe(ovs(), p);
        const walked = walkedOutcome(tracer, p, SPORT).outcome;
        if (seen.sampled && walked.kind === 'endpoints' && seen.outcome.kind === 'endpoints') {
          expect(seen.outcome.endpoints.filter((e) => !walked.endpoints.includes(e)), `${p.what}: walked`).toEqual([]);
        } else {
          expect(walked, `${p.what}: walked`).toEqual(seen.outcome);
        }
        if (seen.sampled && p.expect.kind === 'endpoints' && seen.outcome.kind === 'endpoints') {
          // A sample of a large group: every endpoint reached is one of the expected, and
          // they come from both halves of the bucket order (both group messages).
          const expected = sortedByAddress((p.expect as { endpoints: string[] }).endpoints);
          expect(seen.outcome.endpoints.filter((e) => !expected.includes(e)), p.what).toEqual([]);
          const half = expected.length / 2;
          expect(seen.outcome.endpoints.some((e) => expected.indexOf(e) < half), `${p.what}: first half`).toBe(true);
          expect(seen.outcome.endpoints.some((e) => expected.indexOf(e) >= half), `${p.what}: second half`).toBe(true);
        } else {
          expect(seen.outcome, p.what).toEqual(p.expect);
        }
      }
    });
  }

  it('traced every kind of address and outcome, in both families', () => {
    const has = (re: RegExp, pred: (p: Probe) => boolean = () => true) => covered.some((p) => re.test(p.what) && pred(p));
    for (const kind of [/ ClusterIP /, / NodePort /, / externalIP /, / loadBalancerIP /, /unused port/, /no Service at/, /unallocated ServiceCIDR address/]) {
      expect(has(kind, (p) => p.family === 4), String(kind)).toBe(true);
      expect(has(kind, (p) => p.family === 6), `${kind} IPv6`).toBe(true);
    }
    for (const outcome of ['endpoints', 'controller', 'drop', 'pass'] as const) expect(covered.some((p) => p.expect.kind === outcome), outcome).toBe(true);
    for (const proto of ['TCP', 'UDP', 'SCTP'] as const) expect(covered.some((p) => p.protocol === proto), proto).toBe(true);
    // externalTrafficPolicy Local, from a local Pod (all endpoints) and from outside (local ones).
    expect(has(/dual-stack-node: shop\/web:http\/TCP externalIP 192\.0\.2\.10:80 from 10\.244\.1\.99$/)).toBe(true);
    expect(has(/dual-stack-node: shop\/web:http\/TCP externalIP 192\.0\.2\.10:80 from 198\.18\.0\.99$/)).toBe(true);
  });

  it('sends traffic that is not IP, and IPv6 neighbour discovery, straight to NORMAL', () => {
    ovs().loadBundle(fs.readFileSync(path.join(GOLDEN, 'ovs/dual-stack-node.ovs'), 'utf8'));
    for (const flow of ['arp,in_port=1,arp_spa=10.244.1.5,arp_tpa=10.244.1.1', 'icmp6,in_port=1,ipv6_src=fd00:10:244:1::5,ipv6_dst=ff02::1:ff00:1,icmpv6_type=135']) {
      const t = ovs().trace(flow);
      expect(t).toMatch(/^ 0\. .*priority (0|210)/m);
      expect(t).toMatch(/^\s+NORMAL$/m);
      expect(t).not.toMatch(/ct\(/);
    }
  });

  it('sends a local endpoint that reaches itself through its Service back out of its port, SNATed', () => {
    ovs().loadBundle(fs.readFileSync(path.join(GOLDEN, 'ovs/dual-stack-node.ovs'), 'utf8'));
    // shop/mirror's only endpoint is the local 10.244.1.5:8080 (fd00:10:244:1::5 for web's IPv6 ClusterIP).
    for (const [flow, vsip] of [
      ['dp_hash=1,tcp,in_port=2,nw_src=10.244.1.5,nw_dst=10.96.0.11,tcp_src=40000,tcp_dst=8080', '169.254.0.253'],
      ['dp_hash=1,tcp6,in_port=2,ipv6_src=fd00:10:244:1::5,ipv6_dst=fd00:96::10,tcp_src=40000,tcp_dst=80', 'fc01::aabb:ccdd:eeff'],
    ]) {
      let t = ovs().trace(flow);
      if (/nat\(dst=[^)]*2::6/.test(t)) t = ovs().trace(flow.replace('dp_hash=1', 'dp_hash=2'));
      expect(t).toMatch(/nat\(dst=(10\.244\.1\.5|\[fd00:10:244:1::5\]):8080\)/);
      expect(t).toContain(`nat(src=${vsip})`);
      expect(t).toMatch(/^\s+IN_PORT$/m);
      // One output, to the datapath port of OpenFlow port 2 (NORMAL would flood the others).
      expect([...t.matchAll(/^Datapath actions: (.*)$/gm)].pop()![1]).toBe(dpPort(ovs(), 'p2'));
    }
  });
});
