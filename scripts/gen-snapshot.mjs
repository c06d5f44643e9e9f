#!/usr/bin/env node
// Synthetic cluster snapshots for the benchmark, scale runs and property tests: a plain
// cluster value (Services with their ports and endpoints), the Kubernetes objects a cluster
// holds, and the text `kubectl get -o yaml` / `-o json` would print for them. The changes
// a cluster goes through are in test/helpers/cluster-changes.ts. Deterministic: the same
// arguments give the same bytes.
//
//   node scripts/gen-snapshot.mjs --services 10000 [--endpoints 3] [--nodeports N] [--mixed [--affinity all|none]]
//        [--format flow|yaml|yaml-list|json] > snap.yaml
//
// --mixed makes the benchmark's realistic mix: ClusterIP, NodePort and LoadBalancer
// Services, some with Local traffic policy and source ranges, some with session affinity,
// endpoints on many nodes (some on this one), the last endpoint of every fifth Service
// terminating. --affinity all (or none) gives every Service of the mix affinity (or none).
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';

export const NODE = { name: 'node-a', ip: '192.168.0.2' };
export const OTHER_NODE = 'node-b';
export const CLUSTER_CIDR = '10.128.0.0/9';
export const SERVICE_CIDR = '172.30.0.0/16';
/** Services a snapshot can hold: one /16 of ClusterIPs. */
export const MAX_SERVICES = 60000;

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

function plainService(i, eps, nodePort) {
  return {
    ns: `ns${i % 100}`,
    name: `svc${i}`,
    clusterIP: clusterIP(i),
    type: nodePort ? 'NodePort' : 'ClusterIP',
    ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort }],
    externalLocal: false,
    affinity: undefined,
    lbIP: undefined,
    endpoints: eps,
  };
}

/**
 * Service i of the benchmark's mix: 60% ClusterIP, 20% NodePort, 20% LoadBalancer (half
 * Local, with source ranges); ClientIP affinity on one in seven, or on `affinity` ('all'
 * or 'none') of them.
 */
function mixedService(i, eps, nodePort, affinity) {
  const s = plainService(i, eps, undefined);
  const kind = i % 10;
  if (kind >= 6) {
    s.type = kind >= 8 ? 'LoadBalancer' : 'NodePort';
    s.ports[0].nodePort = nodePort();
  }
  if (kind >= 8) s.lbIP = v4(100, 64, i);
  if (kind === 9) {
    s.externalLocal = true;
    s.sourceRanges = ['203.0.113.0/24', '198.51.100.0/24'];
  }
  if (affinity === 'all' || (affinity === undefined && i % 7 === 0)) s.affinity = 3600;
  if (i % 5 === 0 && eps.length > 1) eps[eps.length - 1].terminating = true;
  return s;
}

/**
 * A cluster of n Services with `endpoints` endpoints each. Plain: ClusterIP Services,
 * every other endpoint on this node, the first `nodePorts` Services of type NodePort.
 * Mixed: the benchmark's mix (see the header), one endpoint in ten on this node.
 *
 * @param {number} n
 * @param {{ endpoints?: number, nodePorts?: number, mixed?: boolean, affinity?: 'all' | 'none' }} [options]
 */
export function makeCluster(n, { endpoints = 3, nodePorts = 0, mixed = false, affinity = undefined } = {}) {
  if (affinity !== undefined && affinity !== 'all' && affinity !== 'none') throw new Error(`affinity: all or none, not ${affinity}`);
  if (n > MAX_SERVICES) throw new Error(`at most ${MAX_SERVICES} Services (one /16 of ClusterIPs)`);
  const services = [];
  let pod = 0;
  let nextNodePort = 30000;
  for (let i = 0; i < n; i++) {
    const eps = [];
    for (let k = 0; k < endpoints; k++) {
      const p = pod++;
      if (!mixed) eps.push({ ip: podIP(p), local: k % 2 === 0 });
      else eps.push({ ip: podIP(p), local: p % 10 === 0, node: `node-${p % 97}` });
    }
    services.push(mixed ? mixedService(i, eps, () => nextNodePort++, affinity) : plainService(i, eps, i < nodePorts ? 30000 + i : undefined));
  }
  return { services, nextPod: pod };
}

/** The objects every snapshot starts with: proxy configuration, this node, the Service CIDR. */
function headerObjects() {
  return [
    { apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', clusterCIDR: CLUSTER_CIDR, detectLocalMode: 'ClusterCIDR' },
    { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE.name }, status: { addresses: [{ type: 'InternalIP', address: NODE.ip }] } },
    { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs: [SERVICE_CIDR] } },
  ];
}

function serviceObject(s) {
  const spec = {
    type: s.type,
    clusterIP: s.clusterIP,
    ports: s.ports.map((p) => {
      const port = { name: p.name, port: p.port, protocol: p.protocol };
      if (p.nodePort) port.nodePort = p.nodePort;
      return port;
    }),
  };
  if (s.type !== 'ClusterIP' && s.externalLocal) spec.externalTrafficPolicy = 'Local';
  if (s.affinity !== undefined) {
    spec.sessionAffinity = 'ClientIP';
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: s.affinity } };
  }
  if (s.type === 'LoadBalancer' && s.sourceRanges?.length) spec.loadBalancerSourceRanges = s.sourceRanges;
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: s.ns, name: s.name }, spec };
  if (s.type === 'LoadBalancer' && s.lbIP) svc.status = { loadBalancer: { ingress: [{ ip: s.lbIP }] } };
  return svc;
}

/**
 * A Service's EndpointSlices: one for its endpoints (always, even with none), and one for
 * the endpoints of each `portShift` (pods whose named ports have other numbers: the
 * Service's target ports plus the shift), as a rollout that renumbers a port makes them.
 */
function sliceObjects(s) {
  const shifts = [...new Set(s.endpoints.map((e) => e.portShift ?? 0))].filter((k) => k !== 0).sort((a, b) => a - b);
  return [0, ...shifts].map((shift) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: s.ns, name: shift === 0 ? `${s.name}-1` : `${s.name}-shift${shift}`, labels: { 'kubernetes.io/service-name': s.name } },
    addressType: 'IPv4',
    endpoints: s.endpoints
      .filter((e) => (e.portShift ?? 0) === shift)
      .map((e) => {
        const ep = { addresses: [e.ip], nodeName: e.local ? NODE.name : (e.node ?? OTHER_NODE) };
        if (e.terminating !== undefined || e.node !== undefined) {
          ep.conditions = e.terminating ? { ready: false, serving: true, terminating: true } : { ready: true, serving: true, terminating: false };
        }
        return ep;
      }),
    ports: s.ports.map((p) => ({ name: p.name, port: (p.targetPort ?? p.port) + shift, protocol: p.protocol })),
  }));
}

/** The cluster as Kubernetes objects, in snapshot order. */
export function clusterObjects(cluster) {
  const objects = headerObjects();
  for (const s of cluster.services) objects.push(serviceObject(s), ...sliceObjects(s));
  return objects;
}

/** A top-level mapping in block style with every value on one line in flow style, as people write by hand. */
function flowDocument(o) {
  return Object.entries(o)
    .map(([k, v]) => `${k}: ${stringify(v, { collectionStyle: 'flow', lineWidth: 0, flowCollectionPadding: false }).trimEnd()}\n`)
    .join('');
}

/**
 * Objects as text. yaml: documents as `kubectl get -o yaml` prints them (block style,
 * sequences not indented); yaml-list: one kubectl List; json: the List as `kubectl get -o
 * json` prints it; flow: documents with flow-style values.
 */
export function renderSnapshot(objects, format) {
  switch (format) {
    case 'yaml':
      return objects.map((o) => stringify(o, { indentSeq: false, lineWidth: 0 })).join('---\n');
    case 'yaml-list':
      return stringify({ apiVersion: 'v1', items: objects, kind: 'List', metadata: { resourceVersion: '' } }, { indentSeq: false, lineWidth: 0 });
    case 'json':
      return JSON.stringify({ apiVersion: 'v1', items: objects, kind: 'List', metadata: { resourceVersion: '' } }, null, 4) + '\n';
    case 'flow':
      return objects.map(flowDocument).join('---\n');
    default:
      throw new Error(`unknown format ${format}`);
  }
}

/** The cluster as one multi-document YAML snapshot (flow-style values). */
export function snapshotYaml(cluster) {
  return renderSnapshot(clusterObjects(cluster), 'flow');
}

function main(argv) {
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    if (i === -1) return dflt;
    const v = Number(argv[i + 1]);
    if (!Number.isInteger(v) || v < 0) throw new Error(`${name}: expected a whole number`);
    return v;
  };
  const fi = argv.indexOf('--format');
  const format = fi === -1 ? 'flow' : argv[fi + 1];
  const ai = argv.indexOf('--affinity');
  const affinity = ai === -1 ? undefined : argv[ai + 1];
  const cluster = makeCluster(opt('--services', 100), { endpoints: opt('--endpoints', 3), nodePorts: opt('--nodeports', 0), mixed: argv.includes('--mixed'), affinity });
  process.stdout.write(renderSnapshot(clusterObjects(cluster), format));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
