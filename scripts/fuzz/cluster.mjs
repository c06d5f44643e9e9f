// Random valid cluster snapshots (fast-check arbitraries): every object passes the API
// server's rules as kproxc checks them, so each one must compile. Shared by the property
// tests and `npm run fuzz`, which mutates them into bad and hostile input.
import fc from 'fast-check';

const NODE = 'test-node';

const lower = 'abcdefghijklmnopqrstuvwxyz';
const alnum = lower + '0123456789';

/** A DNS-1035 label: short ones mostly, sometimes the longest allowed (63). */
const dns1035 = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.constantFrom(...lower), fc.string({ unit: fc.constantFrom(...alnum, '-'), maxLength: 8 }), fc.constantFrom(...alnum)).map(([a, b, c]) => a + b + c) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...lower), fc.string({ unit: fc.constantFrom(...alnum, '-'), minLength: 61, maxLength: 61 }), fc.constantFrom(...alnum)).map(([a, b, c]) => a + b + c) },
);
/** A DNS-1123 label that may start with a digit (port names, namespaces). */
const dns1123 = fc.oneof(dns1035, fc.integer({ min: 0, max: 99 }).map((n) => `${n}x`));

const byte = fc.integer({ min: 0, max: 255 });
const hex = (n) => n.toString(16);

// Address pools far from the special ranges the API server refuses for endpoints.
const clusterIPv4 = fc.tuple(byte, fc.integer({ min: 1, max: 254 })).map(([a, b]) => `172.30.${a}.${b}`);
const clusterIPv6 = fc.integer({ min: 1, max: 0xffff }).map((n) => `fd00:10:96::${hex(n)}`);
const podIPv4 = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 254 })).map(([a, b]) => `10.180.${a}.${b}`);
const podIPv6 = fc.integer({ min: 1, max: 0x3ff }).map((n) => `fd00:10:180::${hex(n)}`);
const publicIPv4 = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 })).map(([a, b]) => `203.0.${a}.${b}`);
const publicIPv6 = fc.integer({ min: 1, max: 0xffff }).map((n) => `2001:db8::${hex(n)}`);

const sourceRange = fc.tuple(
  fc.oneof(
    fc.tuple(byte, fc.integer({ min: 8, max: 32 })).map(([a, n]) => `198.51.${a}.0/${n}`),
    fc.integer({ min: 32, max: 128 }).map((n) => `2001:db8:1::/${n}`),
  ),
  fc.constantFrom('', ' ', '  '),
  fc.constantFrom('', ' '),
).map(([c, pre, post]) => pre + c + post); // stray spaces, as kube-proxy tolerates

const protocol = fc.constantFrom('TCP', 'UDP', 'SCTP');

function servicePorts(external) {
  return fc
    .uniqueArray(fc.record({ name: dns1123, protocol, port: fc.integer({ min: 1, max: 65535 }), nodePort: fc.integer({ min: 30000, max: 32767 }), target: fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constantFrom('http', 'dns-tcp', 'metrics')) }), {
      minLength: 1,
      maxLength: 3,
      selector: (p) => p.name,
    })
    .map((ports) => {
      const usedPort = new Set();
      const usedNodePort = new Set();
      return ports
        .filter((p) => {
          const k = `${p.port}/${p.protocol}`;
          const nk = `${p.nodePort}/${p.protocol}`;
          if (usedPort.has(k) || (external && usedNodePort.has(nk))) return false;
          usedPort.add(k);
          usedNodePort.add(nk);
          return true;
        })
        .map((p, _i, all) => {
          const out = { protocol: p.protocol, port: p.port, targetPort: p.target };
          if (all.length > 1 || p.name.length % 2 === 0) out.name = p.name;
          if (external) out.nodePort = p.nodePort;
          return out;
        });
    });
}

const families = fc.constantFrom([4], [4], [6], [4, 6], [6, 4]);

function service(namespace, name) {
  return fc
    .record({
      kind: fc.constantFrom('ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName', 'headless'),
      families,
      ip4: clusterIPv4,
      ip6: clusterIPv6,
      ext4: fc.array(publicIPv4, { maxLength: 2 }),
      ext6: fc.array(publicIPv6, { maxLength: 1 }),
      ranges: fc.array(sourceRange, { maxLength: 2 }),
      ingress: fc.array(fc.record({ n: fc.integer({ min: 1, max: 254 }), mode: fc.constantFrom(undefined, 'VIP', 'Proxy') }), { maxLength: 2 }),
      etp: fc.constantFrom(undefined, 'Cluster', 'Local'),
      itp: fc.constantFrom(undefined, 'Cluster', 'Local'),
      // null: no affinity; undefined: ClientIP with the default timeout.
      affinity: fc.option(fc.option(fc.integer({ min: 1, max: 86400 }), { nil: undefined })),
      distribution: fc.constantFrom(undefined, undefined, 'PreferClose'),
      otherProxy: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      ports: servicePorts(false),
      portsExt: servicePorts(true),
    })
    .map((s) => {
      const meta = { namespace, name };
      if (s.otherProxy) meta.labels = { 'service.kubernetes.io/service-proxy-name': 'other' };
      const svc = { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: {} };
      const spec = svc.spec;
      if (s.kind === 'ExternalName') {
        spec.type = 'ExternalName';
        spec.externalName = 'db.example.com';
        return { svc, families: [], ports: [] };
      }
      const external = s.kind === 'NodePort' || s.kind === 'LoadBalancer';
      spec.type = s.kind === 'headless' ? 'ClusterIP' : s.kind;
      if (s.kind === 'headless') {
        spec.clusterIP = 'None';
        spec.clusterIPs = ['None'];
      } else {
        const ips = s.families.map((f) => (f === 4 ? s.ip4 : s.ip6));
        spec.clusterIP = ips[0];
        spec.clusterIPs = ips;
      }
      spec.ipFamilies = s.families.map((f) => `IPv${f}`);
      spec.ports = external ? s.portsExt : s.ports;
      const externalIPs = [...s.ext4, ...s.ext6];
      if (externalIPs.length) spec.externalIPs = externalIPs;
      if (s.kind === 'LoadBalancer' && s.ranges.length) spec.loadBalancerSourceRanges = s.ranges;
      if (s.kind === 'LoadBalancer' && s.ingress.length) {
        const ingress = s.ingress.map((g, i) => {
          const ip = s.families[i % s.families.length] === 4 ? `192.0.2.${g.n}` : `2001:db8:2::${hex(g.n)}`;
          return g.mode ? { ip, ipMode: g.mode } : { ip };
        });
        svc.status = { loadBalancer: { ingress } };
      }
      if (external && s.etp) spec.externalTrafficPolicy = s.etp;
      if (s.kind === 'LoadBalancer' && s.etp === 'Local') spec.healthCheckNodePort = 30000 + (Number(s.ip4.split('.')[3]) % 2767);
      if (s.itp) spec.internalTrafficPolicy = s.itp;
      if (s.affinity === null) spec.sessionAffinity = 'None';
      else {
        spec.sessionAffinity = 'ClientIP';
        if (s.affinity !== undefined) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: s.affinity } };
      }
      if (s.distribution) spec.trafficDistribution = s.distribution;
      return { svc, families: s.families, ports: spec.ports };
    });
}

function endpointSlices(namespace, svcName, fams, ports) {
  const endpoint = (family) =>
    fc.record({
      ip: family === 4 ? podIPv4 : podIPv6,
      ready: fc.constantFrom(undefined, true, false),
      serving: fc.constantFrom(undefined, true, false),
      terminating: fc.constantFrom(undefined, true, false),
      node: fc.constantFrom(undefined, NODE, 'node-b'),
      zone: fc.constantFrom(undefined, 'zone-a', 'zone-b'),
      hint: fc.constantFrom(undefined, 'zone-a', 'zone-b'),
      nodeHint: fc.constantFrom(undefined, NODE, 'node-b'),
    });
  const slice = (family, i) =>
    fc.record({ endpoints: fc.array(endpoint(family), { maxLength: 4 }), portSubset: fc.subarray(ports.map((_, j) => j)), extraPort: fc.boolean() }).map((s) => {
      const eps = [];
      const seen = new Set();
      for (const e of s.endpoints) {
        if (seen.has(e.ip)) continue;
        seen.add(e.ip);
        const ep = { addresses: [e.ip] };
        const conditions = {};
        if (e.ready !== undefined) conditions.ready = e.ready;
        if (e.serving !== undefined) conditions.serving = e.serving;
        if (e.terminating !== undefined) conditions.terminating = e.terminating;
        if (Object.keys(conditions).length) ep.conditions = conditions;
        if (e.node) ep.nodeName = e.node;
        if (e.zone) ep.zone = e.zone;
        if (e.hint || e.nodeHint) {
          ep.hints = {};
          if (e.hint) ep.hints.forZones = [{ name: e.hint }];
          if (e.nodeHint) ep.hints.forNodes = [{ name: e.nodeHint }];
        }
        eps.push(ep);
      }
      const slicePorts = s.portSubset.map((j) => {
        const p = { port: typeof ports[j].targetPort === 'number' ? ports[j].targetPort : 8080, protocol: ports[j].protocol };
        p.name = ports[j].name ?? '';
        return p;
      });
      if (s.extraPort && !slicePorts.some((p) => p.name === 'extra')) slicePorts.push({ name: 'extra', port: 9999, protocol: 'TCP' });
      return {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { namespace, name: `${svcName.slice(0, 50)}-${family}${i}`, labels: { 'kubernetes.io/service-name': svcName } },
        addressType: `IPv${family}`,
        endpoints: eps,
        ports: slicePorts,
      };
    });
  const perFamily = fams.map((f) => fc.array(fc.constant(f), { maxLength: 2 }).chain((xs) => fc.tuple(...xs.map((_, i) => slice(f, i)))));
  return fc.tuple(...perFamily).map((xss) => xss.flat());
}

const node = fc
  .record({ v4: fc.boolean(), v6: fc.boolean(), ext: fc.boolean(), zone: fc.constantFrom(undefined, 'zone-a', 'zone-b'), podCIDR: fc.boolean() })
  .map((n) => {
    const addresses = [];
    if (n.v4 || !n.v6) addresses.push({ type: 'InternalIP', address: '192.168.0.2' });
    if (n.v6) addresses.push({ type: 'InternalIP', address: 'fd00:192:168::2' });
    if (n.ext) addresses.push({ type: 'ExternalIP', address: '198.18.0.2' });
    addresses.push({ type: 'Hostname', address: NODE });
    const obj = { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE }, status: { addresses } };
    if (n.zone) obj.metadata.labels = { 'topology.kubernetes.io/zone': n.zone };
    if (n.podCIDR) obj.spec = { podCIDR: '10.180.0.0/24', podCIDRs: ['10.180.0.0/24', 'fd00:10:180::/64'] };
    return obj;
  });

const proxyConfig = fc.option(
  fc
    .record({
      mode: fc.constantFrom(undefined, 'ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'),
      cidr: fc.constantFrom(undefined, '10.0.0.0/8', '10.0.0.0/8,fd00:10::/64', 'fd00:10::/64'),
      npa: fc.constantFrom(undefined, [], ['primary'], ['192.168.0.0/24'], ['0.0.0.0/0', '::/0'], ['192.168.0.2/32', 'fd00:192:168::/64']),
      bit: fc.option(fc.integer({ min: 0, max: 31 })),
      all: fc.option(fc.boolean()),
      iptables: fc.boolean(),
    })
    .map((c) => {
      const obj = { apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', mode: 'nftables' };
      if (c.mode) obj.detectLocalMode = c.mode;
      if (c.mode === 'BridgeInterface') obj.detectLocal = { bridgeInterface: 'cbr0' };
      if (c.mode === 'InterfaceNamePrefix') obj.detectLocal = { interfaceNamePrefix: 'veth' };
      if (c.cidr) obj.clusterCIDR = c.cidr;
      if (c.npa) obj.nodePortAddresses = c.npa;
      const masq = {};
      if (c.bit !== null) masq.masqueradeBit = c.bit;
      if (c.all !== null) masq.masqueradeAll = c.all;
      if (Object.keys(masq).length) obj[c.iptables ? 'iptables' : 'nftables'] = masq;
      return obj;
    }),
);

const serviceCIDR = { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs: ['172.30.0.0/16', 'fd00:10:96::/112'] } };

/** A cluster: its objects in a stable order. */
export const clusterArb = fc
  .uniqueArray(fc.tuple(fc.constantFrom('default', 'kube-system', 'ns1', 'ns2'), dns1035), { minLength: 1, maxLength: 5, selector: ([ns, n]) => `${ns}/${n}` })
  .chain((ids) =>
    fc.tuple(
      node,
      proxyConfig,
      fc.boolean(),
      fc.tuple(...ids.map(([ns, n]) => service(ns, n).chain((s) => endpointSlices(ns, n, s.families, s.ports).map((slices) => [s.svc, ...slices])))),
    ),
  )
  .map(([n, config, withCIDR, groups]) => [n, ...(config ? [config] : []), ...(withCIDR ? [serviceCIDR] : []), ...groups.flat()]);

/** How a snapshot is written: YAML documents, a kind: List (as kubectl prints), or JSON. */
export const formatArb = fc.constantFrom('yaml', 'list', 'json');
