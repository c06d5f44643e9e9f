import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  affinitySet,
  endpointChain,
  endpointNamer,
  endpointNames,
  hashAndTruncate,
  parseEndpointChain,
  parseServicePortChain,
  servicePortChains,
  type ServicePortChains,
} from '../../src/backends/nftables/names.js';
import { ipFromBytes, parseIP } from '../../src/net/ip.js';
import { fcParams } from '../helpers/fc-runs.js';
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

// Service ports and endpoints whose names the tests build, read back, and build again.
const SERVICE_PORTS = [
  sp('ns1', 'svc1', 'p80'),
  sp('kube-system', 'kube-dns', 'dns', 'UDP'),
  sp('a', 'b', '', 'SCTP'),
  sp('a', 'b', '', 'UDP'),
  sp('ns', 'udp', 'tcp', 'UDP'),
  sp('ns', 'svc', '53'),
  sp('ns', 'svc', '10-0-0-1', 'UDP'),
  sp('x'.repeat(63), 'y'.repeat(63), 'z'.repeat(15)),
  sp('x'.repeat(63), 'y'.repeat(63), 'z'.repeat(63), 'SCTP'),
  sp('ns', 'sérvice', 'p'),
  // Beyond what the API server takes in a port name: "_", "__" and "/" in it.
  sp('ns', 'svc', 'p_'),
  sp('ns', 'svc', 'a__b', 'UDP'),
  sp('ns', 'svc', 'a/b/c'),
];
const ENDPOINTS = [
  ep('10.0.0.1', 80),
  ep('0.0.0.0', 0),
  ep('255.255.255.255', 65535),
  ep('192.168.100.9', 8080),
  ep('fd00:10:180::1', 53),
  ep('::', 1),
  ep('::1', 8080),
  ep('1::', 9),
  ep('::ffff:1.2.3.4', 443),
  ep('2001:db8:0:0:1:0:0:1', 53),
  ep('fd00:1234:5678:9abc:def0:1234:5678:9abc', 65535),
];

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
    for (const id of SERVICE_PORTS) {
      const namer = endpointNamer(id);
      for (const e of ENDPOINTS) expect(namer(e)).toEqual(endpointNames(id, e));
    }
  });

  it('leaves names long enough to be truncated to endpointNames', () => {
    const id = sp('n'.repeat(63), 's'.repeat(63), 'p'.repeat(63));
    const long = ep('fd00:1234:5678:9abc:def0:1234:5678:9abc', 65535);
    expect(endpointNamer(id)(long)).toEqual(endpointNames(id, long));
    expect(endpointNamer(id)(long).chain.length).toBeLessThanOrEqual(256);
  });
});

describe('chain names read back', () => {
  const chainKinds = Object.keys(servicePortChains(sp('a', 'b', ''))) as (keyof ServicePortChains)[];

  /** An id's names, built and read back; an endpoint name truncated by length reads back as undefined. */
  function roundTrip(id: ServicePortName, e: Endpoint): void {
    const chains = servicePortChains(id);
    for (const chain of chainKinds) expect(parseServicePortChain(chains[chain]), chains[chain]).toEqual({ chain, id });
    const name = endpointNames(id, e).chain;
    expect(endpointNamer(id)(e).chain).toBe(name);
    expect(parseEndpointChain(name), name).toEqual(name.endsWith('...') ? undefined : { id, ip: e.ip, port: e.port });
  }

  it("kube-proxy's names", () => {
    expect(parseServicePortChain('service-ULMVA6XW-ns1/svc1/tcp/p80')).toEqual({ chain: 'clusterPolicy', id: sp('ns1', 'svc1', 'p80') });
    expect(parseServicePortChain('external-42NFTM6N-ns2/svc2/tcp/p80')).toEqual({ chain: 'external', id: sp('ns2', 'svc2', 'p80') });
    expect(parseServicePortChain('local-42NFTM6N-ns2/svc2/tcp/p80')).toEqual({ chain: 'localPolicy', id: sp('ns2', 'svc2', 'p80') });
    expect(parseServicePortChain('firewall-HVFWP5L3-ns5/svc5/tcp/p80')).toEqual({ chain: 'firewall', id: sp('ns5', 'svc5', 'p80') });
    expect(parseEndpointChain('endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80')).toEqual({ id: sp('ns1', 'svc1', 'p80'), ip: parseIP('10.180.0.1'), port: 80 });
    expect(parseEndpointChain('endpoint-ZVRFLKHO-ns1/svc1/tcp/p80__fd00.10.180..1/80')).toEqual({ id: sp('ns1', 'svc1', 'p80'), ip: parseIP('fd00:10:180::1'), port: 80 });
  });

  it('every Service port and endpoint, IPv4 and IPv6, odd port names included', () => {
    for (const id of SERVICE_PORTS) for (const e of ENDPOINTS) roundTrip(id, e);
  });

  it('random Service ports and endpoints', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    const id = fc.record({
      namespace: label,
      name: label,
      port: fc.oneof(fc.constant(''), label, fc.stringMatching(/^[-a-z0-9_/]{1,20}$/)),
      protocol: fc.constantFrom('TCP' as const, 'UDP' as const, 'SCTP' as const),
    });
    const address = fc.oneof(
      fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => ipFromBytes(4, b)),
      fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => ipFromBytes(6, b)),
      fc.nat({ max: 0xffff }).map((g) => ipFromBytes(6, Uint8Array.from([0xfd, 0, ...new Array<number>(12).fill(0), g >> 8, g & 0xff]))),
    );
    const endpoint = fc.record({ ip: address, port: fc.nat({ max: 65535 }) }).map(({ ip, port }) => ({ ...ep('0.0.0.0', port), ip }));
    fc.assert(fc.property(id, endpoint, roundTrip), fcParams(2000));
  });

  it('a truncated name, and names of other things, read back as nothing', () => {
    const long = endpointNames(sp('n'.repeat(63), 's'.repeat(63), 'p'.repeat(63)), ep('fd00:1234:5678:9abc:def0:1234:5678:9abc', 65535)).chain;
    expect(long.endsWith('...')).toBe(true);
    expect(parseEndpointChain(long)).toBeUndefined();
    const id = sp('ns1', 'svc1', 'p80');
    const chain = endpointChain(id, ep('10.0.0.1', 80));
    for (const other of [
      'services',
      'service-ips',
      'service-endpoints-check',
      'mark-for-masquerade',
      affinitySet(id, ep('10.0.0.1', 80)),
      chain.replace('endpoint-', 'endpoint-x'),
      chain.toLowerCase(),
      chain.replace('/80', '/'),
      chain.replace('/80', '/080'),
      chain.replace('__', '_'),
      chain.replace('/tcp/', '/icmp/'),
      chain.replace('/tcp/', '/constructor/'),
      chain.replace('10.0.0.1', '10.0.0.256'),
      chain.replace('10.0.0.1', 'fd00:10::1'),
    ]) {
      expect(parseEndpointChain(other), other).toBeUndefined();
      expect(parseServicePortChain(other), other).toBeUndefined();
    }
    expect(parseServicePortChain(chain)).toBeUndefined();
    expect(parseEndpointChain(servicePortChains(id).clusterPolicy)).toBeUndefined();
    expect(parseServicePortChain('service-ULMVA6XW-ns1/svc1')).toBeUndefined();
  });
});
