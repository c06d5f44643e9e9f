// Schema-checked objects to typed values, with the API server's semantic rules. Each
// problem is reported at its field; a bad object is left out so the others are still
// checked and every problem of the run is reported together.
import type { Diagnostic, Position } from '../diag/diagnostic.js';
import { Reporter } from '../check/collector.js';
import { dnsLabelProblem, dnsSubdomainProblem, interfaceNameProblem, labelValueProblem } from '../check/names.js';
import type { FieldPath } from '../input/source.js';
import { type CIDR, type IP, type IPFamily } from '../net/ip.js';
import { objectName, type TypedObject } from '../schema/validate.js';
import type { Protocol } from './types.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Raw = any;

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
}

const SERVICE_NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/; // DNS-1035 label

function metadataOf(r: Reporter, v: Raw, namespaced: boolean): { namespace: string; name: string } | null {
  const md = v.metadata;
  let ok = true;
  const namespace = namespaced ? (md.namespace ?? 'default') : '';
  if (namespaced) {
    const p = dnsLabelProblem(namespace);
    if (p) {
      r.report(['metadata', 'namespace'], p);
      ok = false;
    }
  }
  const p = r.kind === 'Service'
    ? md.name.length > 63 || !SERVICE_NAME.test(md.name)
      ? 'must be a DNS-1035 label: lower case letters, digits and "-", starting with a letter'
      : null
    : dnsSubdomainProblem(md.name);
  if (p) {
    r.report(['metadata', 'name'], p);
    ok = false;
  }
  for (const [k, val] of Object.entries((md.labels ?? {}) as Record<string, string>)) {
    const lp = labelValueProblem(val);
    if (lp) r.report(['metadata', 'labels', k], lp);
  }
  return ok ? { namespace, name: md.name } : null;
}

function decodeService(r: Reporter, v: Raw): DecodedService | null {
  const meta = metadataOf(r, v, true);
  const spec = v.spec ?? {};
  const labels: Record<string, string> = v.metadata.labels ?? {};
  const annotations: Record<string, string> = v.metadata.annotations ?? {};
  const type: string = spec.type ?? 'ClusterIP';
  let ok = meta !== null;

  // Cluster IPs: clusterIPs wins; clusterIP must agree with its first entry.
  let skip: string | undefined;
  const clusterIPs: IP[] = [];
  const ipTexts: string[] = spec.clusterIPs ?? (spec.clusterIP !== undefined ? [spec.clusterIP] : []);
  if (spec.clusterIPs && spec.clusterIP !== undefined && spec.clusterIPs[0] !== spec.clusterIP) {
    r.report(['spec', 'clusterIP'], `must equal spec.clusterIPs[0] (${JSON.stringify(spec.clusterIPs[0])})`);
    ok = false;
  }
  if (type === 'ExternalName') skip = 'ExternalName Services have no proxy rules';
  else if (ipTexts.length === 0 || ipTexts[0] === '' || ipTexts[0] === 'None') skip = 'headless Services have no proxy rules';
  else {
    ipTexts.forEach((t, i) => {
      const path: FieldPath = spec.clusterIPs ? ['spec', 'clusterIPs', i] : ['spec', 'clusterIP'];
      const ip = r.ip(path, t);
      if (!ip) ok = false;
      else if (clusterIPs.some((x) => x.family === ip.family)) {
        r.report(path, 'two cluster IPs of the same family');
        ok = false;
      } else clusterIPs.push(ip);
    });
    const fams: string[] = spec.ipFamilies ?? [];
    fams.forEach((f, i) => {
      const want = f === 'IPv4' ? 4 : 6;
      if (clusterIPs[i] && clusterIPs[i].family !== want) {
        r.report(['spec', 'ipFamilies', i], `${f} does not match the cluster IP ${ipTexts[i]}`);
        ok = false;
      }
    });
  }
  if (labels['service.kubernetes.io/service-proxy-name'] !== undefined) {
    skip = `labelled service.kubernetes.io/service-proxy-name=${labels['service.kubernetes.io/service-proxy-name']}: handled by another proxy`;
  }

  const ports: DecodedService['ports'] = [];
  const seenPorts = new Set<string>();
  const seenNames = new Set<string>();
  const rawPorts: Raw[] = spec.ports ?? [];
  rawPorts.forEach((p, i) => {
    const name: string = p.name ?? '';
    if (name !== '') {
      const np = dnsLabelProblem(name);
      if (np) {
        r.report(['spec', 'ports', i, 'name'], np);
        ok = false;
      } else if (seenNames.has(name)) {
        r.report(['spec', 'ports', i, 'name'], `duplicate port name ${JSON.stringify(name)}`);
        ok = false;
      }
      seenNames.add(name);
    } else if (rawPorts.length > 1) {
      r.report(['spec', 'ports', i, 'name'], 'required when a Service has more than one port');
      ok = false;
    }
    const protocol: Protocol = p.protocol ?? 'TCP';
    const key = `${p.port}/${protocol}`;
    if (seenPorts.has(key)) {
      r.report(['spec', 'ports', i, 'port'], `duplicate port ${p.port}/${protocol}`);
      ok = false;
    }
    seenPorts.add(key);
    const nodePort: number = p.nodePort ?? 0;
    if (nodePort !== 0 && type !== 'NodePort' && type !== 'LoadBalancer') {
      r.report(['spec', 'ports', i, 'nodePort'], `may only be set for type NodePort or LoadBalancer, not ${type}`);
      ok = false;
    }
    ports.push({ name, protocol, port: p.port, nodePort });
  });

  const externalIPs: IP[] = [];
  (spec.externalIPs ?? []).forEach((t: string, i: number) => {
    const ip = r.ip(['spec', 'externalIPs', i], t);
    if (ip) externalIPs.push(ip);
    else ok = false;
  });

  // kube-proxy trims stray white space here (it is common in the wild) rather than failing.
  const sourceRanges: CIDR[] = [];
  (spec.loadBalancerSourceRanges ?? []).forEach((t: string, i: number) => {
    const c = r.cidr(['spec', 'loadBalancerSourceRanges', i], t.trim(), false);
    if (c) sourceRanges.push(c);
    else ok = false;
  });

  const ingressIPs: IP[] = [];
  ((v.status?.loadBalancer?.ingress ?? []) as Raw[]).forEach((ing, i) => {
    if (ing.ip === undefined || ing.ip === '') return;
    const ip = r.ip(['status', 'loadBalancer', 'ingress', i, 'ip'], ing.ip);
    if (!ip) ok = false;
    // ipMode Proxy: the load balancer proxies, so its VIP must not be short-circuited here.
    else if (ing.ipMode !== 'Proxy') ingressIPs.push(ip);
  });

  let affinityTimeout: number | undefined;
  if (spec.sessionAffinity === 'ClientIP') affinityTimeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800;

  const isExternalType = type === 'NodePort' || type === 'LoadBalancer';
  const topologyMode = annotations['service.kubernetes.io/topology-mode'] ?? annotations['service.kubernetes.io/topology-aware-hints'];
  if (!ok || !meta) return null;
  return {
    pos: r.source.locate(['metadata', 'name']),
    namespace: meta.namespace,
    name: meta.name,
    skip,
    clusterIPs,
    ports,
    externalIPs,
    sourceRanges,
    externalPolicyLocal: isExternalType && spec.externalTrafficPolicy === 'Local',
    internalPolicyLocal: spec.internalTrafficPolicy === 'Local',
    affinityTimeout,
    healthCheckNodePort: spec.healthCheckNodePort ?? 0,
    ingressIPs,
    topologyDisabled: spec.trafficDistribution === undefined && (topologyMode === 'Disabled' || topologyMode === 'disabled'),
  };
}

function decodeEndpointPorts(r: Reporter, raw: Raw[] | null | undefined, path: FieldPath): DecodedEndpointSet['ports'] | null {
  const out: DecodedEndpointSet['ports'] = [];
  let ok = true;
  (raw ?? []).forEach((p: Raw, i: number) => {
    const name: string = p.name ?? '';
    if (name !== '') {
      const np = dnsLabelProblem(name);
      if (np) {
        r.report([...path, i, 'name'], np);
        ok = false;
      }
    }
    if (p.port === undefined || p.port === null) return; // a port without a number is ignored, as kube-proxy does
    out.push({ name, port: p.port, protocol: p.protocol ?? 'TCP' });
  });
  return ok ? out : null;
}

function hintNames(r: Reporter, hints: Raw[] | undefined, path: FieldPath, check: (s: string) => string | null): string[] | undefined {
  if (!hints || hints.length === 0) return undefined;
  const out: string[] = [];
  hints.forEach((h, i) => {
    const p = check(h.name);
    if (p) r.report([...path, i, 'name'], p);
    else out.push(h.name);
  });
  return out;
}

function decodeEndpointSlice(r: Reporter, v: Raw): DecodedEndpointSet | null {
  const meta = metadataOf(r, v, true);
  const service: string | undefined = v.metadata.labels?.['kubernetes.io/service-name'];
  if (v.addressType === 'FQDN') return null;
  if (service === undefined) {
    r.warn(['metadata', 'labels'], 'has no kubernetes.io/service-name label; skipped');
    return null;
  }
  const family: IPFamily = v.addressType === 'IPv6' ? 6 : 4;
  let ok = meta !== null;
  const endpoints: DecodedEndpoint[] = [];
  ((v.endpoints ?? []) as Raw[]).forEach((e, i) => {
    const ip = r.ip(['endpoints', i, 'addresses', 0], e.addresses[0], family);
    if (!ip) ok = false;
    if (e.nodeName !== undefined) {
      const p = dnsSubdomainProblem(e.nodeName);
      if (p) {
        r.report(['endpoints', i, 'nodeName'], p);
        ok = false;
      }
    }
    if (!ip) return;
    const c = e.conditions ?? {};
    const ready = c.ready === undefined || c.ready === null ? true : c.ready;
    // The API defaults a missing serving condition to the ready one.
    const serving = c.serving === undefined || c.serving === null ? ready : c.serving;
    endpoints.push({
      ip,
      nodeName: e.nodeName,
      ready,
      serving,
      terminating: c.terminating === true,
      zoneHints: hintNames(r, e.hints?.forZones, ['endpoints', i, 'hints', 'forZones'], labelValueProblem),
      nodeHints: hintNames(r, e.hints?.forNodes, ['endpoints', i, 'hints', 'forNodes'], dnsSubdomainProblem),
    });
  });
  const ports = decodeEndpointPorts(r, v.ports, ['ports']);
  if (!ok || !meta || !ports) return null;
  return { namespace: meta.namespace, service, family, legacy: false, endpoints, ports };
}

function decodeLegacyEndpoints(r: Reporter, v: Raw): DecodedEndpointSet[] {
  const meta = metadataOf(r, v, true);
  if (!meta) return [];
  const out: DecodedEndpointSet[] = [];
  ((v.subsets ?? []) as Raw[]).forEach((s, si) => {
    const ports = decodeEndpointPorts(r, s.ports, ['subsets', si, 'ports']);
    const byFamily = new Map<IPFamily, DecodedEndpoint[]>();
    for (const [field, ready] of [['addresses', true], ['notReadyAddresses', false]] as const) {
      ((s[field] ?? []) as Raw[]).forEach((a, i) => {
        const ip = r.ip(['subsets', si, field, i, 'ip'], a.ip);
        if (!ip) return;
        const list = byFamily.get(ip.family) ?? [];
        list.push({ ip, nodeName: a.nodeName, ready, serving: ready, terminating: false });
        byFamily.set(ip.family, list);
      });
    }
    if (!ports) return;
    for (const [family, endpoints] of byFamily) {
      out.push({ namespace: meta.namespace, service: meta.name, family, legacy: true, endpoints, ports });
    }
  });
  return out;
}

function decodeNode(r: Reporter, v: Raw): DecodedNode | null {
  const meta = metadataOf(r, v, false);
  let ok = meta !== null;
  const podCIDRs: CIDR[] = [];
  const cidrTexts: string[] = v.spec?.podCIDRs ?? (v.spec?.podCIDR ? [v.spec.podCIDR] : []);
  cidrTexts.forEach((t, i) => {
    const c = r.cidr(v.spec?.podCIDRs ? ['spec', 'podCIDRs', i] : ['spec', 'podCIDR'], t, true);
    if (c) podCIDRs.push(c);
    else ok = false;
  });
  const internalIPs: IP[] = [];
  const externalIPs: IP[] = [];
  ((v.status?.addresses ?? []) as Raw[]).forEach((a, i) => {
    if (a.type !== 'InternalIP' && a.type !== 'ExternalIP') return;
    const ip = r.ip(['status', 'addresses', i, 'address'], a.address);
    if (!ip) ok = false;
    else (a.type === 'InternalIP' ? internalIPs : externalIPs).push(ip);
  });
  if (!ok || !meta) return null;
  return { name: meta.name, labels: v.metadata.labels ?? {}, podCIDRs, internalIPs, externalIPs };
}

function decodeProxyConfig(r: Reporter, v: Raw, obj: TypedObject): DecodedProxyConfig {
  const c: DecodedProxyConfig = { source: obj };
  if (v.hostnameOverride) {
    const p = dnsSubdomainProblem(v.hostnameOverride);
    if (p) r.report(['hostnameOverride'], p);
    else c.hostnameOverride = v.hostnameOverride;
  }
  if (v.clusterCIDR) {
    c.clusterCIDRs = [];
    String(v.clusterCIDR)
      .split(',')
      .forEach((t) => {
        const cidr = r.cidr(['clusterCIDR'], t.trim(), false);
        if (cidr) c.clusterCIDRs!.push(cidr);
      });
    const fams = c.clusterCIDRs.map((x) => x.addr.family);
    if (new Set(fams).size !== fams.length) r.report(['clusterCIDR'], 'at most one CIDR per IP family');
  }
  if (v.detectLocalMode) c.detectLocalMode = v.detectLocalMode;
  if (v.detectLocal?.bridgeInterface) {
    const p = interfaceNameProblem(v.detectLocal.bridgeInterface, false);
    if (p) r.report(['detectLocal', 'bridgeInterface'], p);
    else c.bridgeInterface = v.detectLocal.bridgeInterface;
  }
  if (v.detectLocal?.interfaceNamePrefix) {
    const p = interfaceNameProblem(v.detectLocal.interfaceNamePrefix, true);
    if (p) r.report(['detectLocal', 'interfaceNamePrefix'], p);
    else c.interfaceNamePrefix = v.detectLocal.interfaceNamePrefix;
  }
  const npa: string[] | null | undefined = v.nodePortAddresses;
  if (npa && npa.length === 1 && npa[0] === 'primary') c.nodePortAddresses = 'primary';
  else if (npa && npa.length > 0) {
    c.nodePortCIDRs = [];
    npa.forEach((t, i) => {
      const cidr = r.cidr(['nodePortAddresses', i], t, false);
      if (cidr) c.nodePortCIDRs!.push(cidr);
    });
    c.nodePortAddresses = npa;
  }
  const nft = v.nftables ?? {};
  const ipt = v.iptables ?? {};
  c.masqueradeAll = nft.masqueradeAll ?? ipt.masqueradeAll;
  c.masqueradeBit = nft.masqueradeBit ?? ipt.masqueradeBit ?? undefined;
  return c;
}

function duplicateKey(o: TypedObject): string {
  return `${o.kind} ${objectName(o.source.value) ?? ''}`;
}

export function decodeAll(typed: TypedObject[], diagnostics: Diagnostic[]): Decoded {
  const out: Decoded = { services: [], endpointSets: [], nodes: [], serviceCIDRs: [], proxyConfigs: [] };
  const seen = new Map<string, TypedObject>();
  for (const o of typed) {
    const v = o.source.value as Raw;
    const name = o.kind === 'KubeProxyConfiguration' ? undefined : objectName(v);
    const r = new Reporter(diagnostics, o.source, o.kind, name);
    if (o.kind !== 'KubeProxyConfiguration') {
      const k = duplicateKey(o);
      const first = seen.get(k);
      if (first) {
        const fp = first.source.locate(['metadata', 'name']);
        r.report(['metadata', 'name'], `duplicate ${o.kind}: already defined at ${fp.file}:${fp.line}:${fp.col}`);
        continue;
      }
      seen.set(k, o);
    }
    switch (o.kind) {
      case 'Service': {
        const s = decodeService(r, v);
        if (s) out.services.push(s);
        break;
      }
      case 'EndpointSlice': {
        const s = decodeEndpointSlice(r, v);
        if (s) out.endpointSets.push(s);
        break;
      }
      case 'Endpoints':
        out.endpointSets.push(...decodeLegacyEndpoints(r, v));
        break;
      case 'Node': {
        const n = decodeNode(r, v);
        if (n) out.nodes.push({ node: n, obj: o });
        break;
      }
      case 'ServiceCIDR':
        metadataOf(r, v, false);
        ((v.spec?.cidrs ?? []) as string[]).forEach((t, i) => {
          const c = r.cidr(['spec', 'cidrs', i], t, true);
          if (c) out.serviceCIDRs.push(c);
        });
        break;
      case 'KubeProxyConfiguration':
        out.proxyConfigs.push(decodeProxyConfig(r, v, o));
        break;
    }
  }
  return out;
}
