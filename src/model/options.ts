// Settings that the command line may give, overriding the KubeProxyConfiguration.
import type { IPFamily } from '../net/ip.js';

export interface CompileOptions {
  node?: string;
  nodeIPs?: string[];
  clusterCIDR?: string;
  detectLocalMode?: string;
  nodePortAddresses?: string[];
  masqueradeAll?: boolean;
  masqueradeBit?: number;
  family?: IPFamily;
}
