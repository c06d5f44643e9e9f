// fixtures/service-conflicts.yaml: each destination two Service ports claim, and what the
// first in name order (its owner) does with it, from outside and from the node alike.
import * as path from 'node:path';
import { FIXTURES } from './fixtures.js';

export const CONFLICTS_FILE = path.join(FIXTURES, 'service-conflicts.yaml');

export interface Claimed {
  what: string;
  dst: string;
  port: number;
  /** The owner's endpoints, or none: the owner has none and rejects. */
  endpoints: string[];
}

export const CLAIMED: Claimed[] = [
  { what: "a-clusterip's ClusterIP over b-external's external IP", dst: '172.30.0.10', port: 80, endpoints: ['10.180.0.1:80'] },
  { what: "c-external's external IP (no endpoints) over d-external's", dst: '192.0.2.50', port: 80, endpoints: [] },
  { what: "d-external's own port 81 on the shared external IP", dst: '192.0.2.50', port: 81, endpoints: ['10.180.0.2:80'] },
  { what: "e-loadbalancer's load-balancer IP over f-loadbalancer's", dst: '192.0.2.60', port: 80, endpoints: ['10.180.0.3:80'] },
  { what: "e-loadbalancer's NodePort over f-loadbalancer's", dst: '192.168.0.2', port: 30100, endpoints: ['10.180.0.3:80'] },
  { what: "g-nodeport's NodePort (no endpoints) over h-nodeport's", dst: '192.168.0.2', port: 30200, endpoints: [] },
];

export const OUTSIDE = '203.0.113.2';
export const NODE = '192.168.0.2';
