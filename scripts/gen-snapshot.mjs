#!/usr/bin/env node
// Synthetic cluster snapshots for scale runs and property tests: a plain cluster value
// (services with their ports and endpoints), the changes a cluster goes through, and the
// YAML `kubectl get -o yaml` would print for it. Deterministic: the same arguments give
// the same bytes.
//
//   node scripts/gen-snapshot.mjs --services 10000 [--endpoints 3] [--nodeports N] > snap.yaml
import { pathToFileURL } from 'node:url';

export const NODE = { name: 'node-a', ip: '192.168.0.2' };
export const OTHER_NODE = 'node-b';
export const CLUSTER_CIDR = '10.128.0.0/9';
export const SERVICE_CIDR = '172.30.0.0/16';

/** The i-th address of a block of 2^16 (i < 65536): base.x.y.z with x,y from i. */
function v4(a, b, i) {
  return `${a}.${b + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

export function clusterIP(i) {
  return v4(172, 30, i + 10);
}

export function podIP(i) {
  return v4(10, 128, i + 1);
}

/**
 * A cluster of n ClusterIP Services with `endpoints` endpoints each (every other one on
 * this node); the first `nodePorts` of them are NodePort Services.
 */
export function makeCluster(n, { endpoints = 3, nodePorts = 0 } = {}) {
  const services = [];
  let pod = 0;
  for (let i = 0; i < n; i++) {
    const eps = [];
    for (let k = 0; k < endpoints; k++) eps.push({ ip: podIP(pod++), local: k % 2 === 0 });
    services.push({
      ns: `ns${i % 100}`,
      name: `svc${i}`,
      clusterIP: clusterIP(i),
      type: i < nodePorts ? 'NodePort' : 'ClusterIP',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: i < nodePorts ? 30000 + i : undefined }],
      externalLocal: false,
      affinity: undefined,
      lbIP: undefined,
      endpoints: eps,
    });
  }
  return { services, nextPod: pod };
}

const header = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: ${CLUSTER_CIDR}
detectLocalMode: ClusterCIDR
---
apiVersion: v1
kind: Node
metadata: {name: ${NODE.name}}
status:
  addresses:
  - {type: InternalIP, address: ${NODE.ip}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: kubernetes}
spec: {cidrs: [${SERVICE_CIDR}]}
`;

function serviceYaml(s) {
  const ports = s.ports
    .map((p) => `{name: ${p.name}, port: ${p.port}, protocol: ${p.protocol}${p.nodePort ? `, nodePort: ${p.nodePort}` : ''}}`)
    .join(', ');
  const lines = [
    '---',
    'apiVersion: v1',
    'kind: Service',
    `metadata: {namespace: ${s.ns}, name: ${s.name}}`,
    'spec:',
    `  type: ${s.type}`,
    `  clusterIP: ${s.clusterIP}`,
    `  ports: [${ports}]`,
  ];
  if (s.type !== 'ClusterIP' && s.externalLocal) lines.push('  externalTrafficPolicy: Local');
  if (s.affinity !== undefined) {
    lines.push('  sessionAffinity: ClientIP', `  sessionAffinityConfig: {clientIP: {timeoutSeconds: ${s.affinity}}}`);
  }
  if (s.type === 'LoadBalancer' && s.sourceRanges?.length) lines.push(`  loadBalancerSourceRanges: [${s.sourceRanges.join(', ')}]`);
  if (s.type === 'LoadBalancer' && s.lbIP) lines.push(`status: {loadBalancer: {ingress: [{ip: ${s.lbIP}}]}}`);
  return lines.join('\n') + '\n';
}

function sliceYaml(s) {
  const eps = s.endpoints
    .map((e) => `- {addresses: [${e.ip}], nodeName: ${e.local ? NODE.name : OTHER_NODE}}`)
    .join('\n');
  const ports = s.ports.map((p) => `{name: ${p.name}, port: ${p.targetPort ?? p.port}, protocol: ${p.protocol}}`).join(', ');
  return [
    '---',
    'apiVersion: discovery.k8s.io/v1',
    'kind: EndpointSlice',
    `metadata: {namespace: ${s.ns}, name: ${s.name}-1, labels: {kubernetes.io/service-name: ${s.name}}}`,
    'addressType: IPv4',
    s.endpoints.length ? `endpoints:\n${eps}` : 'endpoints: []',
    `ports: [${ports}]`,
  ].join('\n') + '\n';
}

/** The cluster as one multi-document YAML snapshot. */
export function snapshotYaml(cluster) {
  const parts = [header];
  for (const s of cluster.services) parts.push(serviceYaml(s), sliceYaml(s));
  return parts.join('');
}

function main(argv) {
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    if (i === -1) return dflt;
    const v = Number(argv[i + 1]);
    if (!Number.isInteger(v) || v < 0) throw new Error(`${name}: expected a whole number`);
    return v;
  };
  const n = opt('--services', 100);
  if (n > 60000) throw new Error('--services: at most 60000 (one /16 of ClusterIPs)');
  const cluster = makeCluster(n, { endpoints: opt('--endpoints', 3), nodePorts: opt('--nodeports', 0) });
  process.stdout.write(snapshotYaml(cluster));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
