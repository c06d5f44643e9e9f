// Small random clusters for cross-checks: a few Services of random type, traffic policies,
// source ranges and external IPs, with endpoints local or remote, ready, terminating or not
// serving, and the packets worth sending at them. Deterministic for a seed. No session
// affinity: a real kernel would pin repeated probes to one endpoint after the first.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LAB } from './packet-lab.js';

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

export interface Target {
  dst: string;
  port: number;
}

export interface RandomCluster {
  yaml: string;
  endpointIPs: string[];
  targets: Target[];
}

const HEADER = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.0.0.0/8
---
apiVersion: v1
kind: Node
metadata: {name: test-node}
status:
  addresses:
  - {type: InternalIP, address: 192.168.0.2}
  - {type: InternalIP, address: 192.168.1.2}
  - {type: ExternalIP, address: 192.168.99.11}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: kubernetes}
spec: {cidrs: [172.30.0.0/16]}
`;

export function randomCluster(seed: number, services = 4): RandomCluster {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const docs: string[] = [HEADER];
  const endpointIPs: string[] = [];
  const targets: Target[] = [{ dst: '172.30.0.200', port: 80 }];
  for (let i = 1; i <= services; i++) {
    const type = pick(['ClusterIP', 'NodePort', 'LoadBalancer']);
    const external = type !== 'ClusterIP';
    const clusterIP = `172.30.0.${10 + i}`;
    const nodePort = 3000 + i;
    const lines = [`apiVersion: v1`, `kind: Service`, `metadata: {namespace: ns${i}, name: svc${i}}`, `spec:`, `  clusterIP: ${clusterIP}`, `  type: ${type}`];
    if (external) {
      const policy = pick(['Cluster', 'Local']);
      lines.push(`  externalTrafficPolicy: ${policy}`);
      // The API server allocates one for (and allows one only on) LoadBalancer Services with Local policy.
      if (type === 'LoadBalancer' && policy === 'Local') lines.push(`  healthCheckNodePort: ${31000 + i}`);
    }
    lines.push(`  internalTrafficPolicy: ${pick(['Cluster', 'Cluster', 'Local'])}`);
    const externalIP = r() < 0.4 ? `192.168.99.${20 + i}` : undefined;
    if (externalIP) lines.push(`  externalIPs: [${externalIP}]`);
    const lbIP = type === 'LoadBalancer' ? `1.2.3.${i}` : undefined;
    if (lbIP) {
      const ranges = pick([[], ['203.0.113.0/25'], ['198.51.100.0/24'], ['192.168.0.0/24', '203.0.113.0/25']]);
      if (ranges.length) lines.push(`  loadBalancerSourceRanges: [${ranges.join(', ')}]`);
    }
    lines.push(`  ports: [{name: p80, port: 80, protocol: TCP${external ? `, nodePort: ${nodePort}` : ''}}]`);
    if (lbIP) lines.push(`status:`, `  loadBalancer:`, `    ingress: [{ip: ${lbIP}}]`);
    docs.push(lines.join('\n') + '\n');

    const count = Math.floor(r() * 4);
    const targetPort = pick([80, 8080]);
    const eps: string[] = [];
    for (let j = 1; j <= count; j++) {
      const ip = `10.180.${i}.${j}`;
      endpointIPs.push(ip);
      const cond = pick(['{ready: true}', '{ready: true}', '{ready: false, serving: true, terminating: true}', '{ready: false, serving: false, terminating: true}']);
      eps.push(`- {addresses: [${ip}], nodeName: ${pick(['test-node', 'other-node'])}, conditions: ${cond}}`);
    }
    if (count > 0) {
      docs.push(
        [
          `apiVersion: discovery.k8s.io/v1`,
          `kind: EndpointSlice`,
          `metadata: {namespace: ns${i}, name: svc${i}-1, labels: {kubernetes.io/service-name: svc${i}}}`,
          `addressType: IPv4`,
          `endpoints:`,
          ...eps,
          `ports: [{name: p80, port: ${targetPort}, protocol: TCP}]`,
        ].join('\n') + '\n',
      );
    }
    targets.push({ dst: clusterIP, port: 80 }, { dst: clusterIP, port: 81 });
    if (external) targets.push({ dst: LAB.nodeIPs[0], port: nodePort }, { dst: LAB.nodeIPs[1], port: nodePort });
    if (externalIP) targets.push({ dst: externalIP, port: 80 });
    if (lbIP) targets.push({ dst: lbIP, port: 80 });
  }
  return { yaml: docs.join('---\n'), endpointIPs, targets };
}

/** A handful of (source, target) pairs, sampled without repeats. */
export function samplePackets(seed: number, targets: Target[], n: number): { src: string; dst: string; port: number }[] {
  const r = rng(seed * 7919 + 1);
  const sources = [LAB.clientExternal, LAB.clientBlocked, LAB.clientPod, LAB.nodeIPs[0]];
  const all = targets.flatMap((t) => sources.map((src) => ({ src, ...t })));
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all.slice(0, n);
}

/** Runs `fn` with the cluster's snapshot in a file of its own, removed afterwards. */
export async function withSnapshotFile<T>(c: { seed: number; yaml: string }, fn: (file: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-random-'));
  const file = path.join(dir, `random-${c.seed}.yaml`);
  fs.writeFileSync(file, c.yaml);
  try {
    return await fn(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
