// An endpoint that several EndpointSlices of a Service list is one endpoint. Which copy
// stands (its hints, its conditions) decides the table, so it may not depend on where the
// slices stand in the snapshot: they are merged in name order, and a local copy wins.
import { describe, expect, it } from 'vitest';
import { loadModel } from '../../src/compile.js';
import { kproxc } from '../helpers/kproxc.js';

const node = `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {topology.kubernetes.io/zone: zone-a}
status:
  addresses: [{type: InternalIP, address: 192.168.0.2}]
`;
const service = `apiVersion: v1
kind: Service
metadata: {namespace: ns, name: web}
spec:
  clusterIP: 10.96.0.10
  ports: [{name: http, port: 80, protocol: TCP}]
`;
/** A slice of web; each endpoint is "ip" or "ip@zone" (a zone hint) and sits on n1 when marked local. */
function slice(name: string, eps: { ip: string; zone?: string; local?: boolean; ready?: boolean }[]): string {
  const items = eps.map(
    (e) =>
      `  - addresses: [${e.ip}]\n` +
      (e.local ? '    nodeName: n1\n' : '') +
      (e.ready === false ? '    conditions: {ready: false}\n' : '') +
      (e.zone ? `    hints: {forZones: [{name: ${e.zone}}]}\n` : ''),
  );
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: ns
  name: ${name}
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
${items.join('')}`;
}

function endpointsOf(docs: string[]) {
  const model = loadModel([{ name: 'c.yaml', text: docs.join('---\n') }], {});
  const eps = model.families[0].endpoints.get([...model.families[0].endpoints.keys()][0])!;
  return eps.map((e) => `${e.key}${e.isLocal ? ' local' : ''}${e.ready ? '' : ' not-ready'}${e.zoneHints ? ` zones=${[...e.zoneHints].join(',')}` : ''}`);
}

/** Every order of the documents. */
function orders<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, i) => orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe('an endpoint listed by two slices', () => {
  // Slice web-2 gives 10.0.0.1 a zone hint, web-1 does not: with the hinted copy every
  // endpoint has hints and topology keeps the node's zone only; with the other, all stay.
  const slices = [
    slice('web-1', [{ ip: '10.0.0.1', local: true }]),
    slice('web-2', [{ ip: '10.0.0.1', local: true, zone: 'zone-a' }, { ip: '10.0.0.2', zone: 'zone-b' }]),
  ];

  it('is the last local copy in slice-name order, whatever the documents order', () => {
    for (const docs of orders([node, service, ...slices])) {
      expect(endpointsOf(docs)).toEqual(['10.0.0.1:8080 local zones=zone-a', '10.0.0.2:8080 zones=zone-b']);
    }
  });

  it('is the first copy when no copy is local, whatever the documents order', () => {
    const remote = [
      slice('web-1', [{ ip: '10.0.0.1', ready: false }]),
      slice('web-2', [{ ip: '10.0.0.1', zone: 'zone-a' }, { ip: '10.0.0.2', zone: 'zone-b' }]),
    ];
    for (const docs of orders([node, service, ...remote])) {
      expect(endpointsOf(docs)).toEqual(['10.0.0.1:8080 not-ready', '10.0.0.2:8080 zones=zone-b']);
    }
  });

  it.each(['nftables', 'ovs'])('compiles to the same %s program in every order', async (backend) => {
    const outs = new Set<string>();
    for (const docs of orders([node, service, ...slices])) {
      const r = await kproxc(['compile', '--backend', backend, '-'], docs.join('---\n'));
      expect(r.code, r.stderr).toBe(0);
      outs.add(r.stdout);
    }
    expect(outs.size).toBe(1);
    // Topology: all endpoints hinted, so only the zone's endpoint is programmed.
    const [out] = outs;
    expect(out).toMatch(/10\.0\.0\.1/);
    expect(out).not.toMatch(/10\.0\.0\.2/);
  });
});
