// Settings that the command line may give, overriding the KubeProxyConfiguration.
import type { IPFamily } from '../net/ip.js';
import type { KubeProxyVersion } from './kube-proxy-version.js';

export interface CompileOptions {
  node?: string;
  nodeIPs?: string[];
  clusterCIDR?: string;
  detectLocalMode?: string;
  nodePortAddresses?: string[];
  masqueradeAll?: boolean;
  masqueradeBit?: number;
  family?: IPFamily;
  /** --kube-proxy-version: the table of this release, whatever the snapshot's Node reports. */
  kubeProxyVersion?: KubeProxyVersion;
}
