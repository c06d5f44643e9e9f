#!/usr/bin/env node
// Synthetic but realistic snapshots for the benchmark: a mix of ClusterIP, NodePort and
// LoadBalancer Services (some with Local policy and source ranges, some with affinity),
// several endpoints each (some on this node, some terminating), as YAML or JSON.
//
//   node scripts/bench/generate.mjs SERVICES ENDPOINTS yaml|json > snapshot
//
// Deterministic: the same arguments give the same bytes.
import { stringify } from 'yaml';

export function generateObjects(services, endpointsPerService) {
  const objects = [];
  objects.push({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    hostnameOverride: 'node-0',
    clusterCIDR: '10.0.0.0/8',
    detectLocalMode: 'ClusterCIDR',
  });
  objects.push({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-0', labels: { 'topology.kubernetes.io/zone': 'zone-a' } },
    spec: { podCIDR: '10.0.0.0/24' },
    status: { addresses: [{ type: 'InternalIP', address: '192.168.0.10' }] },
  });
  objects.push({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs: ['172.16.0.0/12'] } });
  let nodePorts = 0;
  for (let i = 0; i < services; i++) {
    const ns = `ns-${i % 50}`;
    const name = `svc-${i}`;
    const kind = i % 10; // 0-5 ClusterIP, 6-7 NodePort, 8-9 LoadBalancer
    const clusterIP = `172.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    const spec = { clusterIP, clusterIPs: [clusterIP], ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] };
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: ns, name }, spec };
    if (kind >= 6) {
      spec.type = kind >= 8 ? 'LoadBalancer' : 'NodePort';
      // A cluster this large runs with a widened --service-node-port-range.
      spec.ports[0].nodePort = 20000 + nodePorts++;
    } else spec.type = 'ClusterIP';
    if (kind === 9) {
      spec.externalTrafficPolicy = 'Local';
      spec.loadBalancerSourceRanges = ['203.0.113.0/24', '198.51.100.0/24'];
    }
    if (kind >= 8) svc.status = { loadBalancer: { ingress: [{ ip: `100.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}` }] } };
    if (i % 7 === 0) {
      spec.sessionAffinity = 'ClientIP';
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 3600 } };
    }
    objects.push(svc);
    const endpoints = [];
    for (let e = 0; e < endpointsPerService; e++) {
      const n = i * endpointsPerService + e;
      const ep = { addresses: [`10.${1 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`], nodeName: `node-${n % 100}`, zone: 'zone-a' };
      if (e === endpointsPerService - 1 && i % 5 === 0) ep.conditions = { ready: false, serving: true, terminating: true };
      else ep.conditions = { ready: true, serving: true, terminating: false };
      endpoints.push(ep);
    }
    objects.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { namespace: ns, name: `${name}-abcde`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints,
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
  }
  return objects;
}

export function render(objects, format) {
  if (format === 'json') return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
  return objects.map((o) => stringify(o)).join('---\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [services = '1000', eps = '10', format = 'yaml'] = process.argv.slice(2);
  process.stdout.write(render(generateObjects(Number(services), Number(eps)), format));
}
