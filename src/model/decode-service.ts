// v1 Service to a DecodedService, with the API server's rules (ValidateService) for every
// field kproxc reads. Problems are reported at their field; the Service is kept only
// when it has none.
import { acceptedCIDR, acceptedIP, type IPRule, type Reporter } from '../check/collector.js';
import { fields, int, list, str, type Fields } from '../check/fields.js';
import { checkMetadata } from '../check/metadata.js';
import { dns1035LabelProblem, dnsLabelProblem, ianaServiceNameProblem } from '../check/names.js';
import type { FieldPath } from '../input/source.js';
import { formatIP, type CIDR, type IP } from '../net/ip.js';
import type { DecodedService } from './decode.js';
import type { Protocol } from './types.js';

const LABEL_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';
const LABEL_HEADLESS = 'service.kubernetes.io/headless';
const DEFAULT_AFFINITY_TIMEOUT = 10800;
const ANY_IP: IPRule = {};
const NON_SPECIAL: IPRule = { nonSpecial: true };

/**
 * How to dump the Services, EndpointSlices, Nodes and ServiceCIDRs kproxc compiles from, in
 * every namespace. One text, so that the warning below, `compile --help` and the README
 * (which a test holds to it) give the same command.
 */
export const DUMP_COMMAND = 'kubectl get services,endpointslices,nodes,servicecidrs -A -o yaml';

/**
 * The API server sets spec.clusterIP on every Service it stores (an address, or None for a
 * headless one), so a Service without one was never applied: a manifest, not a dump. It has
 * no address to program; taking it for headless would drop it without a word, so it is left
 * out with a warning (an error under --strict) that says how to get a dump.
 */
const NEVER_APPLIED =
  'missing: the API server sets it on every Service (an address, or None for a headless one), so this Service was never applied and is left out; ' +
  `compile what the cluster holds: ${DUMP_COMMAND}`;

/** Why kube-proxy leaves a Service alone (its informers never see it, or it has no virtual IP). */
export function skipReason(type: string, labels: Record<string, string>, firstIP: string | undefined): string | undefined {
  if (Object.hasOwn(labels, LABEL_PROXY_NAME)) return `labelled ${LABEL_PROXY_NAME}: handled by another proxy`;
  if (Object.hasOwn(labels, LABEL_HEADLESS)) return `labelled ${LABEL_HEADLESS}`;
  if (type === 'ExternalName') return 'ExternalName Services have no proxy rules';
  if (firstIP === undefined || firstIP === '' || firstIP === 'None') return 'headless Services have no proxy rules';
  return undefined;
}

/** spec.clusterIPs (or spec.clusterIP), at most one per family, agreeing with spec.ipFamilies. */
function clusterIPs(r: Reporter, spec: Fields, headless: boolean): IP[] {
  const out: IP[] = [];
  const many = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0;
  if (many && spec.clusterIP !== undefined && (spec.clusterIPs as unknown[])[0] !== spec.clusterIP) {
    r.report(['spec', 'clusterIP'], 'must equal spec.clusterIPs[0]');
  }
  const texts = many ? list(spec.clusterIPs) : spec.clusterIP !== undefined ? [spec.clusterIP] : [];
  const pathOf = (i: number): FieldPath => (many ? ['spec', 'clusterIPs', i] : ['spec', 'clusterIP']);
  if (headless) {
    texts.forEach((t, i) => {
      if (i > 0) r.report(pathOf(i), `a headless Service (${JSON.stringify(texts[0])}) has no other cluster IP`);
    });
    return out;
  }
  for (let i = 0; i < texts.length; i++) {
    const ip = acceptedIP(texts[i], ANY_IP) ?? r.ip(pathOf(i), texts[i]);
    if (!ip) continue;
    if (out.some((x) => x.family === ip.family)) r.report(pathOf(i), `a second IPv${ip.family} cluster IP (at most one per family)`);
    else out.push(ip);
  }
  const families = list(spec.ipFamilies);
  for (let i = 0; i < families.length; i++) {
    const f = families[i];
    if (f !== 'IPv4' && f !== 'IPv6') continue; // the schema reports it
    if (families.indexOf(f) !== i) r.report(['spec', 'ipFamilies', i], `duplicate ${f}`);
    const ip = out[i];
    if (ip && (ip.family === 4 ? 'IPv4' : 'IPv6') !== f) r.report(['spec', 'ipFamilies', i], `${f} does not match the cluster IP ${formatIP(ip)}`);
  }
  return out;
}

function portField(i: number, field: string): FieldPath {
  return ['spec', 'ports', i, field];
}

/** spec.ports: named when there are several, unique by name, by port and protocol, and by node port. */
function ports(r: Reporter, spec: Fields, type: string, needed: boolean): DecodedService['ports'] {
  const raw = list(spec.ports);
  if (raw.length === 0 && needed) r.warn(['spec', 'ports'], 'empty: a Service with a cluster IP has at least one port (the API server refuses it without); nothing is programmed for it, as kube-proxy programs nothing');
  const out: DecodedService['ports'] = [];
  const names = new Set<string>();
  const portKeys = new Set<string>();
  const nodePortKeys = new Set<string>();
  // A single port cannot repeat another: the keys are for Services with several.
  const several = raw.length > 1;
  for (let i = 0; i < raw.length; i++) {
    const p = fields(raw[i]);
    const name = p.name === undefined ? '' : typeof p.name === 'string' ? p.name : r.text(portField(i, 'name'), p.name) ?? '';
    if (name !== '') {
      const problem = dnsLabelProblem(name);
      if (problem) r.report(portField(i, 'name'), problem);
      else if (names.has(name)) r.report(portField(i, 'name'), `duplicate port name ${JSON.stringify(name)}`);
      if (several) names.add(name);
    } else if (several) {
      // kube-proxy keys a port by its name: one unnamed port among named ones is still
      // told apart, a second one is the duplicate reported above.
      if (names.has('')) r.report(portField(i, 'name'), 'duplicate port name "" (required when a Service has more than one port)');
      else r.warn(portField(i, 'name'), 'required when a Service has more than one port (the API server refuses it without); kube-proxy programs the port under the empty name, and so does kproxc');
      names.add('');
    }
    const protocol = (str(p.protocol) ?? 'TCP') as Protocol;
    const port = int(p.port);
    if (port !== undefined && several) {
      const key = `${port}/${protocol}`;
      if (portKeys.has(key)) r.report(portField(i, 'port'), `duplicate port ${key}`);
      portKeys.add(key);
    }
    const nodePort = int(p.nodePort) ?? 0;
    if (nodePort !== 0) {
      if (type !== 'NodePort' && type !== 'LoadBalancer') r.warn(portField(i, 'nodePort'), `only for type NodePort or LoadBalancer (the API server refuses it for ${type}); kube-proxy programs the node port all the same, and so does kproxc`);
      if (several) {
        const key = `${nodePort}/${protocol}`;
        if (nodePortKeys.has(key)) r.report(portField(i, 'nodePort'), `duplicate node port ${key}`);
        nodePortKeys.add(key);
      }
    }
    // kube-proxy takes endpoint ports from EndpointSlices, never from targetPort.
    if (typeof p.targetPort === 'string') {
      const problem = ianaServiceNameProblem(p.targetPort);
      if (problem) r.warn(portField(i, 'targetPort'), `${problem}; ignored: endpoint ports come from EndpointSlices`);
    } else if (typeof p.targetPort === 'number' && (!Number.isInteger(p.targetPort) || p.targetPort < 1 || p.targetPort > 65535)) {
      r.warn(portField(i, 'targetPort'), 'must be a port number from 1 to 65535, or a port name; ignored: endpoint ports come from EndpointSlices');
    }
    if (port !== undefined) out.push({ name, protocol, port, nodePort });
  }
  return out;
}

function externalIPs(r: Reporter, spec: Fields): IP[] {
  const out: IP[] = [];
  const raw = list(spec.externalIPs);
  for (let i = 0; i < raw.length; i++) {
    const ip = acceptedIP(raw[i], NON_SPECIAL) ?? r.ip(['spec', 'externalIPs', i], raw[i], NON_SPECIAL);
    if (ip) out.push(ip);
  }
  return out;
}

/** kube-proxy trims stray white space here (it is common in the wild) rather than failing; nowhere else. */
function sourceRanges(r: Reporter, spec: Fields, type: string): CIDR[] {
  const out: CIDR[] = [];
  const raw = list(spec.loadBalancerSourceRanges);
  if (raw.length > 0 && type !== 'LoadBalancer') {
    r.warn(
      ['spec', 'loadBalancerSourceRanges'],
      `only for type LoadBalancer (the API server refuses it for ${type}); as kube-proxy does, it applies only to load-balancer IPs in status.loadBalancer.ingress`,
    );
  }
  for (let i = 0; i < raw.length; i++) {
    const t = typeof raw[i] === 'string' ? (raw[i] as string).trim() : raw[i];
    const c = acceptedCIDR(t, false) ?? r.cidr(['spec', 'loadBalancerSourceRanges', i], t, false);
    if (c) out.push(c);
  }
  return out;
}

/** status.loadBalancer.ingress[].ip; ipMode Proxy means the load balancer proxies, so its VIP is not short-circuited here. */
function ingressIPs(r: Reporter, v: Fields): IP[] {
  const out: IP[] = [];
  const raw = list(fields(fields(v.status).loadBalancer).ingress);
  for (let i = 0; i < raw.length; i++) {
    const ing = fields(raw[i]);
    if (ing.ip === undefined || ing.ip === '') continue;
    const ip = acceptedIP(ing.ip, ANY_IP) ?? r.ip(['status', 'loadBalancer', 'ingress', i, 'ip'], ing.ip);
    if (ip && ing.ipMode !== 'Proxy') out.push(ip);
  }
  return out;
}

function affinityTimeout(r: Reporter, spec: Fields): number | undefined {
  if (spec.sessionAffinity !== 'ClientIP') {
    if (spec.sessionAffinityConfig !== undefined && spec.sessionAffinityConfig !== null) {
      r.warn(['spec', 'sessionAffinityConfig'], `ignored: only used with sessionAffinity ClientIP, not ${str(spec.sessionAffinity) ?? 'None'} (the API server refuses it here)`);
    }
    return undefined;
  }
  return int(fields(fields(spec.sessionAffinityConfig).clientIP).timeoutSeconds) ?? DEFAULT_AFFINITY_TIMEOUT;
}

/**
 * The API server allocates a health check node port for a LoadBalancer Service with
 * externalTrafficPolicy Local, and refuses one anywhere else (validateServiceSpec). It only
 * drives kube-proxy's health-check server, never a rule, and kube-proxy's own tests set it
 * elsewhere: a warning.
 */
function healthCheckNodePort(r: Reporter, spec: Fields, type: string): void {
  const port = int(spec.healthCheckNodePort) ?? 0;
  if (port !== 0 && (type !== 'LoadBalancer' || spec.externalTrafficPolicy !== 'Local')) {
    r.warn(['spec', 'healthCheckNodePort'], 'ignored: only used with type LoadBalancer and externalTrafficPolicy Local; the API server refuses it here');
  }
}

export function decodeService(r: Reporter, value: unknown): DecodedService | null {
  const v = fields(value);
  const meta = checkMetadata(r, v, dns1035LabelProblem, true);
  const spec = fields(v.spec);
  const type = str(spec.type) ?? 'ClusterIP';
  const firstIP = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0 ? spec.clusterIPs[0] : spec.clusterIP;
  const neverApplied = type !== 'ExternalName' && (firstIP === undefined || firstIP === '');
  const noVIP = type === 'ExternalName' || firstIP === undefined || firstIP === '' || firstIP === 'None';
  const ips = type === 'ExternalName' ? [] : clusterIPs(r, spec, noVIP);
  const portList = ports(r, spec, type, !noVIP);
  const external = externalIPs(r, spec);
  const ranges = sourceRanges(r, spec, type);
  const ingress = ingressIPs(r, v);
  const timeout = affinityTimeout(r, spec);
  healthCheckNodePort(r, spec, type);
  if (!r.ok || !meta) return null;
  if (neverApplied) {
    r.warn(['spec', 'clusterIP'], NEVER_APPLIED);
    return null;
  }

  const isExternalType = type === 'NodePort' || type === 'LoadBalancer';
  const topologyMode = meta.annotations['service.kubernetes.io/topology-mode'] ?? meta.annotations['service.kubernetes.io/topology-aware-hints'];
  return {
    pos: r.source.locate(['metadata', 'name']),
    namespace: meta.namespace,
    name: meta.name,
    skip: skipReason(type, meta.labels, typeof firstIP === 'string' ? firstIP : undefined),
    clusterIPs: ips,
    ports: portList,
    externalIPs: external,
    sourceRanges: ranges,
    externalPolicyLocal: isExternalType && spec.externalTrafficPolicy === 'Local',
    internalPolicyLocal: spec.internalTrafficPolicy === 'Local',
    affinityTimeout: timeout,
    healthCheckNodePort: int(spec.healthCheckNodePort) ?? 0,
    ingressIPs: ingress,
    topologyDisabled: spec.trafficDistribution === undefined && (topologyMode === 'Disabled' || topologyMode === 'disabled'),
  };
}
