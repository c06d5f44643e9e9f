// Decoded objects + options to one FamilyModel per IP family: node choice, node IPs,
// kube-proxy's configuration, Service ports and their endpoints.
import { UsageError, type Diagnostic } from '../diag/diagnostic.js';
import type { InputFile } from '../input/source.js';
import { dnsSubdomainProblem } from '../check/names.js';
import { cidrContains, hostCIDR, isLoopback, isZeroCIDR, parseCIDR, parseIP, compareIP, type CIDR, type IP, type IPFamily } from '../net/ip.js';
import type { Decoded, DecodedEndpointSet, DecodedNode, DecodedProxyConfig } from './decode.js';
import type { CompileOptions } from './options.js';
import { parseKubeProxyVersion, type ResolvedVersion } from './kube-proxy-version.js';
import {
  servicePortKey,
  type Endpoint,
  type FamilyModel,
  type LocalDetector,
  type NodePortAddresses,
  type ServicePort,
} from './types.js';

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface NodeChoice {
  name: string;
  node?: DecodedNode;
}

function nameList(names: string[]): string {
  return names.length <= 5 ? names.join(', ') : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
}

function chooseNode(d: Decoded, config: DecodedProxyConfig | undefined, opts: CompileOptions, files: InputFile[], diags: Diagnostic[]): NodeChoice | null {
  if (opts.node !== undefined) {
    const problem = dnsSubdomainProblem(opts.node);
    if (problem) throw new UsageError(`--node: ${problem}`);
  }
  const name = opts.node ?? config?.hostnameOverride ?? (d.nodes.length === 1 ? d.nodes[0].node.name : undefined);
  if (name === undefined) {
    // A Node with problems of its own is already reported; its absence here is no news.
    if (d.invalidNodes > 0 && d.nodes.length <= 1) return null;
    if (d.nodes.length === 0) {
      diags.push({
        severity: 'error',
        pos: { file: files[0]?.name ?? '<input>', line: 1, col: 1 },
        message: 'no node to compile for: the snapshot holds no Node; name one with --node (or hostnameOverride)',
      });
    } else {
      // A problem of the snapshot as a whole, shown at the second Node's document.
      const second = d.nodes[1];
      diags.push({
        severity: 'error',
        pos: second.obj.source.locate([]),
        kind: 'Node',
        object: second.node.name,
        message: `the snapshot holds ${d.nodes.length} Nodes (${nameList(d.nodes.map((n) => n.node.name))}); choose one with --node`,
      });
    }
    return null;
  }
  const node = d.nodes.find((n) => n.node.name === name)?.node;
  if (!node && d.nodes.length > 0) {
    diags.push({
      severity: 'warning',
      pos: d.nodes[0].obj.source.locate([]),
      message: `node ${name} is not in the snapshot: no node labels, and node IPs only from --node-ip`,
    });
  }
  return { name, node };
}

function parseFlagCIDRs(flag: string, texts: string[]): CIDR[] {
  return texts.map((t) => {
    const p = parseCIDR(t.trim());
    if (!p) throw new UsageError(`${flag}: ${JSON.stringify(t)} is not a valid CIDR`);
    return p.cidr;
  });
}

function flagIPs(texts: string[] | undefined): IP[] {
  return (texts ?? []).map((t) => {
    const ip = parseIP(t);
    if (!ip) throw new UsageError(`--node-ip: ${JSON.stringify(t)} is not a valid IP address`);
    return ip;
  });
}

const DETECT_MODES = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];

interface Settings {
  masqueradeAll: boolean;
  masqueradeBit: number;
  detectLocalMode: string;
  clusterCIDRs: CIDR[];
  bridgeInterface?: string;
  interfaceNamePrefix?: string;
  nodePortCIDRs: CIDR[]; // empty: the primary node IP (or everything without one)
}

function settings(config: DecodedProxyConfig | undefined, opts: CompileOptions, diags: Diagnostic[]): Settings {
  const detectLocalMode = opts.detectLocalMode ?? (config?.detectLocalMode || 'ClusterCIDR');
  if (!DETECT_MODES.includes(detectLocalMode)) {
    throw new UsageError(`--detect-local-mode: must be one of ${DETECT_MODES.join(', ')}`);
  }
  const s: Settings = {
    masqueradeAll: opts.masqueradeAll ?? config?.masqueradeAll ?? false,
    masqueradeBit: opts.masqueradeBit ?? config?.masqueradeBit ?? 14,
    detectLocalMode,
    clusterCIDRs: opts.clusterCIDR !== undefined ? parseFlagCIDRs('--cluster-cidr', opts.clusterCIDR.split(',')) : config?.clusterCIDRs ?? [],
    bridgeInterface: config?.bridgeInterface,
    interfaceNamePrefix: config?.interfaceNamePrefix,
    nodePortCIDRs: [],
  };
  if (opts.nodePortAddresses !== undefined) {
    const list = opts.nodePortAddresses.flatMap((x) => x.split(',')).filter((x) => x !== '');
    s.nodePortCIDRs = list.length === 1 && list[0] === 'primary' ? [] : parseFlagCIDRs('--node-port-addresses', list);
  } else if (config?.nodePortCIDRs) s.nodePortCIDRs = config.nodePortCIDRs;
  const need = (field: string, present: string | undefined) => {
    if (present === undefined && config?.detectLocalGiven.includes(field)) return; // given but invalid: reported
    if (present === undefined && config) {
      diags.push({
        severity: 'error',
        pos: config.source.source.locate(['detectLocalMode']),
        kind: 'KubeProxyConfiguration',
        field: `detectLocal.${field}`,
        message: `required when detectLocalMode is ${detectLocalMode}`,
      });
    } else if (present === undefined) throw new UsageError(`--detect-local-mode ${detectLocalMode} needs detectLocal.${field} in a KubeProxyConfiguration`);
  };
  if (detectLocalMode === 'BridgeInterface') need('bridgeInterface', s.bridgeInterface);
  if (detectLocalMode === 'InterfaceNamePrefix') need('interfaceNamePrefix', s.interfaceNamePrefix);
  return s;
}

function localDetector(s: Settings, family: IPFamily, node: DecodedNode | undefined): LocalDetector {
  switch (s.detectLocalMode) {
    case 'ClusterCIDR': {
      const c = s.clusterCIDRs.find((x) => x.addr.family === family);
      return c ? { mode: 'cidr', cidr: c } : { mode: 'none' };
    }
    case 'NodeCIDR': {
      const c = node?.podCIDRs.find((x) => x.addr.family === family);
      return c ? { mode: 'cidr', cidr: c } : { mode: 'none' };
    }
    case 'BridgeInterface':
      return s.bridgeInterface ? { mode: 'bridge', interfaceName: s.bridgeInterface } : { mode: 'none' };
    default:
      return s.interfaceNamePrefix ? { mode: 'prefix', interfacePrefix: s.interfaceNamePrefix } : { mode: 'none' };
  }
}

function nodePortAddresses(s: Settings, family: IPFamily, nodeIPs: IP[], primary: IP | undefined): NodePortAddresses {
  let cidrs = s.nodePortCIDRs.filter((c) => c.addr.family === family);
  if (cidrs.length === 0) {
    if (!primary) return { matchAll: true, ips: [] };
    cidrs = [hostCIDR(primary)];
  }
  if (cidrs.some(isZeroCIDR)) return { matchAll: true, ips: [] };
  // Loopback NodePorts are not supported by the nftables mode; kube-proxy skips them.
  const ips = nodeIPs.filter((ip) => !isLoopback(ip) && cidrs.some((c) => cidrContains(c, ip)));
  return { matchAll: false, ips };
}

function uniqueIPs(ips: IP[]): IP[] {
  const out: IP[] = [];
  for (const ip of ips) if (!out.some((x) => compareIP(x, ip) === 0)) out.push(ip);
  return out;
}

/**
 * Endpoints per Service port, merged over slices, deduplicated (a local copy wins), sorted.
 * The slices are merged in name order, not input order: an endpoint two slices list with
 * different hints or conditions must come out the same however the snapshot is ordered.
 */
function endpointsFor(sets: DecodedEndpointSet[], nodeName: string, family: IPFamily): Map<string, Endpoint[]> {
  // Legacy Endpoints count only for Services that no EndpointSlice names.
  const sliced = sets.some((s) => s.legacy) ? new Set(sets.filter((s) => !s.legacy).map((s) => `${s.namespace}/${s.service}`)) : null;
  const byPort = new Map<string, Endpoint[]>();
  for (const set of inNameOrder(sets)) {
    if (set.family !== family) continue;
    if (set.legacy && sliced!.has(`${set.namespace}/${set.service}`)) continue;
    for (let k = 0; k < set.ports.length; k++) {
      const p = set.ports[k];
      const key = servicePortKey({ namespace: set.namespace, name: set.service, port: p.name, protocol: p.protocol });
      const eps = set.endpoints[k];
      for (let j = 0; j < eps.length; j++) eps[j].isLocal = set.nodeNames[j] === nodeName;
      // The set's own list becomes the port's when it is the first; the sets are not read again.
      const merged = byPort.get(key);
      if (!merged) byPort.set(key, eps);
      else for (const e of eps) merged.push(e);
    }
  }
  for (const eps of byPort.values()) uniqueByKey(sortByKey(eps));
  return byPort;
}

/**
 * The sets ordered by object name (stable: the sets of one legacy Endpoints object keep their
 * order). kubectl lists objects by name already, so the sort is skipped when they are.
 */
function inNameOrder(sets: DecodedEndpointSet[]): DecodedEndpointSet[] {
  let sorted = true;
  for (let i = 1; i < sets.length && sorted; i++) sorted = cmp(sets[i - 1].object, sets[i].object) <= 0;
  if (sorted) return sets;
  return sets.map((s, i) => ({ s, i })).sort((a, b) => cmp(a.s.object, b.s.object) || a.i - b.i).map((x) => x.s);
}

/** Sorts endpoints by key as strings, keeping the input order of equal keys (stable). */
function sortByKey(eps: Endpoint[]): Endpoint[] {
  // Most ports have a handful of endpoints: insertion sort, without a comparator call each.
  if (eps.length > 32) return eps.sort((a, b) => cmp(a.key, b.key));
  for (let i = 1; i < eps.length; i++) {
    const e = eps[i];
    let j = i - 1;
    while (j >= 0 && eps[j].key > e.key) {
      eps[j + 1] = eps[j];
      j--;
    }
    eps[j + 1] = e;
  }
  return eps;
}

/**
 * Of the endpoints with one key (next to each other, in input order), keeps one in place:
 * the last local copy if there is one, else the first.
 */
function uniqueByKey(eps: Endpoint[]): void {
  let out = 0;
  for (let i = 0; i < eps.length; ) {
    let j = i + 1;
    let chosen = eps[i];
    for (; j < eps.length && eps[j].key === chosen.key; j++) if (eps[j].isLocal) chosen = eps[j];
    eps[out++] = chosen;
    i = j;
  }
  eps.length = out;
}

/** Sorts items by their keys (keys[i] is the key of items[i]), each key made once, not per comparison. */
function sortByKeys<T>(items: T[], keys: string[]): void {
  const order = Array.from(keys.keys()).sort((a, b) => cmp(keys[a], keys[b]) || a - b);
  const sorted = order.map((i) => items[i]);
  for (let i = 0; i < sorted.length; i++) items[i] = sorted[i];
}

export interface BuildResult {
  families: FamilyModel[];
  nodeName: string;
  /** The kube-proxy release whose table to program: from --kube-proxy-version, else the Node; none from either. */
  kubeProxyVersion?: ResolvedVersion;
}

/** --kube-proxy-version, else the version the chosen Node reports (an error where kproxc does not know it). */
function resolveVersion(d: Decoded, nodeName: string, opts: CompileOptions, diags: Diagnostic[]): ResolvedVersion | undefined {
  if (opts.kubeProxyVersion !== undefined) return { version: opts.kubeProxyVersion, source: 'flag' };
  const entry = d.nodes.find((n) => n.node.name === nodeName);
  const reported = entry?.node.version;
  if (!entry || !reported) return undefined;
  const parsed = parseKubeProxyVersion(reported.text);
  if ('version' in parsed) return { version: parsed.version, source: 'node' };
  const path = ['status', 'nodeInfo', reported.field];
  diags.push({
    severity: 'error',
    pos: entry.obj.source.locate(path),
    kind: 'Node',
    object: entry.node.name,
    field: path.join('.'),
    message: `${parsed.problem}; name the release to compile for with --kube-proxy-version`,
  });
  return undefined;
}

/** kube-proxy has one configuration: a second one is an error at its document. */
function checkOneConfig(d: Decoded, diags: Diagnostic[]): void {
  if (d.proxyConfigs.length <= 1) return;
  const first = d.proxyConfigs[0].source.source.locate([]);
  diags.push({
    severity: 'error',
    pos: d.proxyConfigs[1].source.source.locate([]),
    kind: 'KubeProxyConfiguration',
    message: `more than one KubeProxyConfiguration in the snapshot (the first is at ${first.file}:${first.line}:${first.col})`,
  });
}

export function buildModel(d: Decoded, opts: CompileOptions, files: InputFile[], diags: Diagnostic[]): BuildResult | null {
  checkOneConfig(d, diags);
  const config = d.proxyConfigs[0];
  const choice = chooseNode(d, config, opts, files, diags);
  const s = settings(config, opts, diags);
  const extraIPs = flagIPs(opts.nodeIPs);
  if (!choice) return null;
  const node = choice.node;

  const services = d.services.filter((x) => !x.skip);
  let families: IPFamily[];
  if (opts.family) families = [opts.family];
  else {
    const used = new Set<IPFamily>();
    for (const x of services) for (const ip of x.clusterIPs) used.add(ip.family);
    if (used.size === 0) for (const ip of [...(node?.internalIPs ?? []), ...extraIPs]) used.add(ip.family);
    families = used.size === 0 ? [4] : ([4, 6] as IPFamily[]).filter((f) => used.has(f));
  }

  const result: FamilyModel[] = families.map((family) => {
    const internal = (node?.internalIPs ?? []).filter((ip) => ip.family === family);
    const external = (node?.externalIPs ?? []).filter((ip) => ip.family === family);
    const extra = extraIPs.filter((ip) => ip.family === family);
    const nodeIPs = uniqueIPs([...internal, ...extra, ...external]);
    const primaryNodeIP = internal[0] ?? extra[0] ?? external[0];
    const servicePorts: ServicePort[] = [];
    const sortKeys: string[] = [];
    for (const svc of services) {
      const clusterIP = svc.clusterIPs.find((ip) => ip.family === family);
      if (!clusterIP) continue;
      for (const p of svc.ports) {
        const id = { namespace: svc.namespace, name: svc.name, port: p.name, protocol: p.protocol };
        sortKeys.push(servicePortKey(id));
        servicePorts.push({
          id,
          pos: svc.pos,
          family,
          clusterIP,
          port: p.port,
          nodePort: p.nodePort,
          externalIPs: svc.externalIPs.length === 0 ? [] : uniqueIPs(svc.externalIPs.filter((ip) => ip.family === family)),
          loadBalancerVIPs: svc.ingressIPs.length === 0 ? [] : uniqueIPs(svc.ingressIPs.filter((ip) => ip.family === family)),
          loadBalancerSourceRanges: svc.sourceRanges.length === 0 ? [] : svc.sourceRanges.filter((c) => c.addr.family === family),
          externalPolicyLocal: svc.externalPolicyLocal,
          internalPolicyLocal: svc.internalPolicyLocal,
          affinityTimeout: svc.affinityTimeout,
          healthCheckNodePort: svc.healthCheckNodePort,
          topologyDisabled: svc.topologyDisabled,
        });
      }
    }
    sortByKeys(servicePorts, sortKeys);
    return {
      family,
      nodeName: choice.name,
      nodeLabels: node?.labels ?? {},
      primaryNodeIP,
      nodeIPs,
      podCIDRs: (node?.podCIDRs ?? []).filter((c) => c.addr.family === family),
      servicePorts,
      endpoints: endpointsFor(d.endpointSets, choice.name, family),
      serviceCIDRs: d.serviceCIDRs.filter((c) => c.addr.family === family),
      localDetector: localDetector(s, family, node),
      nodePortAddresses: nodePortAddresses(s, family, nodeIPs, primaryNodeIP),
      masqueradeAll: s.masqueradeAll,
      masqueradeBit: s.masqueradeBit,
    };
  });
  return { families: result, nodeName: choice.name, kubeProxyVersion: resolveVersion(d, choice.name, opts, diags) };
}
