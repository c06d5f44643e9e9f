import { describe, expect, it } from 'vitest';
import { affinitySet, endpointChain, endpointNamer, endpointNames, hashAndTruncate, servicePortChains } from '../../src/backends/nftables/names.js';
import { parseIP } from '../../src/net/ip.js';
import type { Endpoint, ServicePortName } from '../../src/model/types.js';

const sp = (namespace: string, name: string, port: string, protocol: 'TCP' | 'UDP' | 'SCTP' = 'TCP'): ServicePortName => ({
  namespace,
  name,
  port,
  protocol,
});
const ep = (ip: string, port: number): Endpoint => ({
  ip: parseIP(ip)!,
  port,
  key: ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`,
  isLocal: false,
  ready: true,
  serving: true,
  terminating: false,
});

describe('kube-proxy chain names', () => {
  // Names as kube-proxy's nftables unit tests expect them.
  it('service port chains', () => {
    expect(servicePortChains(sp('ns1', 'svc1', 'p80')).clusterPolicy).toBe('service-ULMVA6XW-ns1/svc1/tcp/p80');
    expect(servicePortChains(sp('ns2', 'svc2', 'p80')).external).toBe('external-42NFTM6N-ns2/svc2/tcp/p80');
    expect(servicePortChains(sp('ns2', 'svc2', 'p80')).localPolicy).toBe('local-42NFTM6N-ns2/svc2/tcp/p80');
    expect(servicePortChains(sp('ns5', 'svc5', 'p80')).firewall).toBe('firewall-HVFWP5L3-ns5/svc5/tcp/p80');
  });

  it('endpoint chains and affinity sets', () => {
    expect(endpointChain(sp('ns1', 'svc1', 'p80'), ep('10.180.0.1', 80))).toBe('endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
    expect(affinitySet(sp('ns5', 'svc5', 'p80'), ep('10.180.0.3', 80))).toBe('affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80');
  });

  it('IPv6 endpoints have colons replaced by dots', () => {
    expect(endpointChain(sp('ns1', 'svc1', 'p80'), ep('fd00:10:180::1', 80))).toBe(
      'endpoint-ZVRFLKHO-ns1/svc1/tcp/p80__fd00.10.180..1/80',
    );
  });

  it('lower-cases the protocol', () => {
    expect(servicePortChains(sp('ns1', 'svc1', 'dns', 'UDP')).clusterPolicy).toMatch(/^service-[A-Z2-7]{8}-ns1\/svc1\/udp\/dns$/);
  });

  it('truncates past 240 characters, keeping the hash', () => {
    const long = 'x'.repeat(300);
    const out = hashAndTruncate(long);
    expect(out.length).toBe(240);
    expect(out.endsWith('...')).toBe(true);
    expect(out).toMatch(/^[A-Z2-7]{8}-x+\.\.\.$/);
    expect(hashAndTruncate('short')).toMatch(/^[A-Z2-7]{8}-short$/);
  });
});

describe('endpointNamer', () => {
  it('names endpoints as endpointNames does', () => {
    const ids = [
      sp('ns1', 'svc1', 'p80'),
      sp('kube-system', 'kube-dns', 'dns', 'UDP'),
      sp('a', 'b', '', 'SCTP'),
      sp('x'.repeat(63), 'y'.repeat(63), 'z'.repeat(15)),
      sp('ns', 'sérvice', 'p'),
    ];
    const eps = [
      ep('10.0.0.1', 80),
      ep('0.0.0.0', 0),
      ep('255.255.255.255', 65535),
      ep('192.168.100.9', 8080),
      ep('fd00:10:180::1', 80),
      ep('::ffff:1.2.3.4', 443),
      ep('2001:db8:0:0:1:0:0:1', 53),
    ];
    for (const id of ids) {
      const namer = endpointNamer(id);
      for (const e of eps) expect(namer(e)).toEqual(endpointNames(id, e));
    }
  });

  it('leaves names long enough to be truncated to endpointNames', () => {
    const id = sp('n'.repeat(63), 's'.repeat(63), 'p'.repeat(63));
    const long = ep('fd00:1234:5678:9abc:def0:1234:5678:9abc', 65535);
    expect(endpointNamer(id)(long)).toEqual(endpointNames(id, long));
    expect(endpointNamer(id)(long).chain.length).toBeLessThanOrEqual(256);
  });
});
