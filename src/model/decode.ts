// Schema-checked objects to typed values, with the API server's semantic rules. Each
// problem is reported at its field; a bad object is left out so the others are still
// checked and every problem of the run is reported together.
import type { Diagnostic, Position } from '../diag/diagnostic.js';
import { Reporter } from '../check/collector.js';
import { fields } from '../check/fields.js';
import type { CIDR, IP, IPFamily } from '../net/ip.js';
import { objectName, type TypedObject } from '../schema/validate.js';
import { decodeEndpointSlice, decodeLegacyEndpoints } from './decode-endpoints.js';
import { decodeNode, decodeServiceCIDR } from './decode-node.js';
import { decodeProxyConfig } from './decode-proxy-config.js';
import { decodeService } from './decode-service.js';
import type { Protocol } from './types.js';

export interface DecodedService {
  pos: Position;
  namespace: string;
  name: string;
  /** Why kube-proxy would not program it, if it would not. */
  skip?: string;
  clusterIPs: IP[];
  ports: { name: string; protocol: Protocol; port: number; nodePort: number }[];
  externalIPs: IP[];
  sourceRanges: CIDR[];
  externalPolicyLocal: boolean;
  internalPolicyLocal: boolean;
  affinityTimeout?: number;
  healthCheckNodePort: number;
  ingressIPs: IP[];
  topologyDisabled: boolean;
}

export interface DecodedEndpoint {
  ip: IP;
  /** The address as written, which is its canonical text (anything else is refused). */
  address: string;
  nodeName?: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints?: string[];
  nodeHints?: string[];
}

export interface DecodedEndpointSet {
  namespace: string;
  service: string;
  family: IPFamily;
  legacy: boolean; // from v1 Endpoints
  endpoints: DecodedEndpoint[];
  ports: { name: string; port: number; protocol: Protocol }[];
  /** Where the object stands, and its name, for warnings about it. */
  pos: Position;
  object: string;
}

export interface DecodedNode {
  name: string;
  labels: Record<string, string>;
  podCIDRs: CIDR[];
  internalIPs: IP[];
  externalIPs: IP[];
}

export interface DecodedProxyConfig {
  hostnameOverride?: string;
  clusterCIDRs?: CIDR[];
  detectLocalMode?: string;
  bridgeInterface?: string;
  interfaceNamePrefix?: string;
  /** detectLocal fields that were given, valid or not (an invalid one is reported, not "required"). */
  detectLocalGiven: string[];
  nodePortAddresses?: string[] | 'primary';
  nodePortCIDRs?: CIDR[];
  masqueradeAll?: boolean;
  masqueradeBit?: number;
  source: TypedObject;
}

export interface Decoded {
  services: DecodedService[];
  endpointSets: DecodedEndpointSet[];
  nodes: { node: DecodedNode; obj: TypedObject }[];
  serviceCIDRs: CIDR[];
  proxyConfigs: DecodedProxyConfig[];
  /** Node objects that had problems (reported): with one, "no node in the snapshot" would only be noise. */
  invalidNodes: number;
}


/** Objects are the same when kind, namespace (absent means "default") and name are. */
function identity(o: TypedObject): string | undefined {
  const md = fields(fields(o.source.value).metadata);
  if (o.kind === 'KubeProxyConfiguration' || typeof md.name !== 'string') return undefined;
  const namespaced = o.kind !== 'Node' && o.kind !== 'ServiceCIDR';
  const ns = namespaced ? (typeof md.namespace === 'string' ? md.namespace : 'default') : '';
  // The namespace's length keeps the key unambiguous whatever the names hold.
  return `${o.kind} ${ns.length} ${ns}/${md.name}`;
}

/** A second object with the same identity is refused at its name; the first one stands. */
function isDuplicate(o: TypedObject, r: Reporter, seen: Map<string, TypedObject>): boolean {
  const id = identity(o);
  if (id === undefined) return false;
  const first = seen.get(id);
  if (!first) {
    seen.set(id, o);
    return false;
  }
  const fp = first.source.locate(['metadata', 'name']);
  r.report(['metadata', 'name'], `duplicate ${o.kind}: already defined at ${fp.file}:${fp.line}:${fp.col}`);
  return true;
}

/** EndpointSlices and Endpoints whose Service is not in the snapshot (an incomplete snapshot, most likely). */
function warnOrphans(out: Decoded, serviceKeys: Set<string>, diagnostics: Diagnostic[]): void {
  for (const set of out.endpointSets) {
    if (serviceKeys.has(`${set.namespace}/${set.service}`)) continue;
    diagnostics.push({
      severity: 'warning',
      pos: set.pos,
      kind: set.legacy ? 'Endpoints' : 'EndpointSlice',
      object: set.object,
      message: `names Service ${set.namespace}/${set.service}, which is not in the snapshot; skipped`,
    });
  }
  out.endpointSets = out.endpointSets.filter((s) => serviceKeys.has(`${s.namespace}/${s.service}`));
}

export function decodeAll(typed: TypedObject[], diagnostics: Diagnostic[]): Decoded {
  const out: Decoded = { services: [], endpointSets: [], nodes: [], serviceCIDRs: [], proxyConfigs: [], invalidNodes: 0 };
  const seen = new Map<string, TypedObject>();
  // Every Service that is in the snapshot, valid or not, programmed or skipped.
  const serviceKeys = new Set<string>();
  for (const o of typed) {
    const v = o.source.value;
    const name = o.kind === 'KubeProxyConfiguration' ? undefined : objectName(v, o.kind);
    const r = new Reporter(diagnostics, o.source, o.kind, name, o.refused);
    if (isDuplicate(o, r, seen)) continue;
    switch (o.kind) {
      case 'Service': {
        const md = fields(fields(v).metadata);
        if (typeof md.name === 'string') serviceKeys.add(`${typeof md.namespace === 'string' ? md.namespace : 'default'}/${md.name}`);
        const s = decodeService(r, v);
        if (s) out.services.push(s);
        break;
      }
      case 'EndpointSlice': {
        const s = decodeEndpointSlice(r, v);
        if (s?.set) out.endpointSets.push(s.set);
        else if (s?.skip?.warn) r.warn(s.skip.path, s.skip.reason);
        break;
      }
      case 'Endpoints':
        out.endpointSets.push(...decodeLegacyEndpoints(r, v));
        break;
      case 'Node': {
        const n = decodeNode(r, v);
        if (n) out.nodes.push({ node: n, obj: o });
        else out.invalidNodes++;
        break;
      }
      case 'ServiceCIDR':
        out.serviceCIDRs.push(...decodeServiceCIDR(r, v));
        break;
      case 'KubeProxyConfiguration':
        out.proxyConfigs.push(decodeProxyConfig(r, v, o));
        break;
    }
  }
  warnOrphans(out, serviceKeys, diagnostics);
  return out;
}
