// Schema-checked objects to typed values, with the API server's semantic rules. Each
// problem is reported at its field; a bad object is left out so the others are still
// checked and every problem of the run is reported together.
import type { Diagnostic, Position } from '../diag/diagnostic.js';
import type { SourceObject } from '../input/source.js';
import { Reporter } from '../check/collector.js';
import { fields } from '../check/fields.js';
import type { CIDR, IP, IPFamily } from '../net/ip.js';
import type { TypedObject } from '../schema/validate.js';
import { decodeEndpointSlice, decodeLegacyEndpoints } from './decode-endpoints.js';
import { decodeNode, decodeServiceCIDR } from './decode-node.js';
import { decodeProxyConfig } from './decode-proxy-config.js';
import { decodeService } from './decode-service.js';
import type { Endpoint, Protocol } from './types.js';

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

export interface DecodedEndpointSet {
  namespace: string;
  service: string;
  family: IPFamily;
  legacy: boolean; // from v1 Endpoints
  ports: { name: string; port: number; protocol: Protocol }[];
  /**
   * The model's endpoints of each port (endpoints[k] for ports[k]), in input order. They
   * are made as the object is decoded, so that nothing else is kept for them; whether one
   * is local is known only once the node is chosen, and the model fills it in.
   */
  endpoints: Endpoint[][];
  /** The node of each endpoint, in the order of every port's list. */
  nodeNames: (string | undefined)[];
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
  /** The kube-proxy version the node reports, as written, and the field it is in. */
  version?: { text: string; field: 'kubeProxyVersion' | 'kubeletVersion' };
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


type Locate = SourceObject['locate'];

interface FirstObject {
  kind: string;
  namespace: string;
  /** Where it stands; not the object itself, whose value may die young. */
  locate: Locate;
}

/**
 * The first object of each identity: kind, namespace (absent means "default"; none for
 * cluster-scoped kinds) and name. Found by name first: names seldom repeat, so a key
 * string is made only for a name that does.
 */
class FirstObjects {
  private readonly byName = new Map<string, FirstObject | Map<string, FirstObject>>();

  /** The first object with this identity; undefined when there is none yet, and this one becomes it. */
  firstOrAdd(kind: string, namespace: string, name: string, locate: Locate): FirstObject | undefined {
    const found = this.byName.get(name);
    if (found === undefined) {
      this.byName.set(name, { kind, namespace, locate });
      return undefined;
    }
    // Kinds hold no space, so "kind namespace" tells every pair apart.
    let byKind: Map<string, FirstObject>;
    if (found instanceof Map) byKind = found;
    else if (found.kind === kind && found.namespace === namespace) return found;
    else {
      byKind = new Map([[`${found.kind} ${found.namespace}`, found]]);
      this.byName.set(name, byKind);
    }
    const key = `${kind} ${namespace}`;
    const first = byKind.get(key);
    if (first === undefined) byKind.set(key, { kind, namespace, locate });
    return first;
  }
}

/** A second object with the same identity is refused at its name; the first one stands. */
function isDuplicate(o: TypedObject, r: Reporter, seen: FirstObjects): boolean {
  const md = fields(fields(o.source.value).metadata);
  if (o.kind === 'KubeProxyConfiguration' || typeof md.name !== 'string') return false;
  const namespaced = o.kind !== 'Node' && o.kind !== 'ServiceCIDR';
  const namespace = namespaced ? (typeof md.namespace === 'string' ? md.namespace : 'default') : '';
  const first = seen.firstOrAdd(o.kind, namespace, md.name, o.source.locate);
  if (first === undefined) return false;
  const fp = first.locate(['metadata', 'name']);
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

/**
 * Decodes objects one at a time, in input order, keeping only what it decodes (not the
 * objects' values), so that a value may be let go as soon as it is added.
 */
export class Decoder {
  private readonly out: Decoded = { services: [], endpointSets: [], nodes: [], serviceCIDRs: [], proxyConfigs: [], invalidNodes: 0 };
  private readonly seen = new FirstObjects();
  // Every Service that is in the snapshot, valid or not, programmed or skipped.
  private readonly serviceKeys = new Set<string>();

  constructor(private readonly diagnostics: Diagnostic[]) {}

  add(o: TypedObject): void {
    const { out } = this;
    const v = o.source.value;
    const name = o.kind === 'KubeProxyConfiguration' ? undefined : o.name;
    const r = new Reporter(this.diagnostics, o.source, o.kind, name, o.refused);
    if (isDuplicate(o, r, this.seen)) return;
    switch (o.kind) {
      case 'Service': {
        // "namespace/name" ("default" when absent), as warnOrphans looks it up.
        if (name !== undefined) this.serviceKeys.add(name);
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

  /** Everything decoded; Endpoint sets of Services not in the snapshot are warned about and left out. */
  finish(): Decoded {
    warnOrphans(this.out, this.serviceKeys, this.diagnostics);
    return this.out;
  }
}

export function decodeAll(typed: TypedObject[], diagnostics: Diagnostic[]): Decoded {
  const decoder = new Decoder(diagnostics);
  for (const o of typed) decoder.add(o);
  return decoder.finish();
}
