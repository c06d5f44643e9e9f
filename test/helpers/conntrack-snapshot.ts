// The start of the small snapshots the conntrack suites compile: kube-proxy's configuration
// for node-1, and a List holding that Node, to which a suite appends its Services and slices.

export function oneNodeListHead(nodeIP: string): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
hostnameOverride: node-1
clusterCIDR: 10.0.0.0/8
detectLocalMode: ClusterCIDR
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: node-1}
  status: {addresses: [{type: InternalIP, address: ${nodeIP}}]}`;
}
