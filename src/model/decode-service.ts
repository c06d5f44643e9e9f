// v1 Service to a DecodedService, with the API server's rules (ValidateService) for every
// field kproxc reads. Problems are reported at their field; the Service is kept only
// when it has none.
import type { Reporter } from '../check/collector.js';
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
  texts.forEach((t, i) => {
    const ip = r.ip(pathOf(i), t);
    if (!ip) return;
    if (out.some((x) => x.family === ip.family)) r.report(pathOf(i), `a second IPv${ip.family} cluster IP (at most one per family)`);
    else out.push(ip);
  });
  const families = list(spec.ipFamilies);
  families.forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6') return; // the schema reports it
    if (families.indexOf(f) !== i) r.report(['spec', 'ipFamilies', i], `duplicate ${f}`);
    const ip = out[i];
    if (ip && `IPv${ip.family}` !== f) r.report(['spec', 'ipFamilies', i], `${f} does not match the cluster IP ${formatIP(ip)}`);
  });
  return out;
}

/** spec.ports: named when there are several, unique by name, by port and protocol, and by node port. */
function ports(r: Reporter, spec: Fields, type: string, needed: boolean): DecodedService['ports'] {
  const raw = list(spec.ports);
  if (raw.length === 0 && needed) r.report(['spec', 'ports'], 'required: a Service with a cluster IP needs at least one port');
  const out: DecodedService['ports'] = [];
  const names = new Set<string>();
  const portKeys = new Set<string>();
  const nodePortKeys = new Set<string>();
  raw.forEach((item, i) => {
    const p = fields(item);
    const at = (f: string): FieldPath => ['spec', 'ports', i, f];
    const name = p.name === undefined ? '' : r.text(at('name'), p.name) ?? '';
    if (name !== '') {
      const problem = dnsLabelProblem(name);
      if (problem) r.report(at('name'), problem);
      else if (names.has(name)) r.report(at('name'), `duplicate port name ${JSON.stringify(name)}`);
      names.add(name);
    } else if (raw.length > 1) r.report(at('name'), 'required when a Service has more than one port');
    const protocol = (str(p.protocol) ?? 'TCP') as Protocol;
    const port = int(p.port);
    if (port !== undefined) {
      const key = `${port}/${protocol}`;
      if (portKeys.has(key)) r.report(at('port'), `duplicate port ${key}`);
      portKeys.add(key);
    }
    const nodePort = int(p.nodePort) ?? 0;
    if (nodePort !== 0) {
      if (type !== 'NodePort' && type !== 'LoadBalancer') r.report(at('nodePort'), `may only be set for type NodePort or LoadBalancer, not ${type}`);
      const key = `${nodePort}/${protocol}`;
      if (nodePortKeys.has(key)) r.report(at('nodePort'), `duplicate node port ${key}`);
      nodePortKeys.add(key);
    }
    if (typeof p.targetPort === 'string') {
      const problem = ianaServiceNameProblem(p.targetPort);
      if (problem) r.report(at('targetPort'), problem);
    } else if (typeof p.targetPort === 'number' && (!Number.isInteger(p.targetPort) || p.targetPort < 1 || p.targetPort > 65535)) {
      r.report(at('targetPort'), 'must be a port number from 1 to 65535, or a port name');
    }
    if (port !== undefined) out.push({ name, protocol, port, nodePort });
  });
  return out;
}

function externalIPs(r: Reporter, spec: Fields): IP[] {
  const out: IP[] = [];
  list(spec.externalIPs).forEach((t, i) => {
    const ip = r.ip(['spec', 'externalIPs', i], t, { nonSpecial: true });
    if (ip) out.push(ip);
  });
  return out;
}

/** kube-proxy trims stray white space here (it is common in the wild) rather than failing; nowhere else. */
function sourceRanges(r: Reporter, spec: Fields, type: string): CIDR[] {
  const out: CIDR[] = [];
  const raw = list(spec.loadBalancerSourceRanges);
  if (raw.length > 0 && type !== 'LoadBalancer') {
    r.report(['spec', 'loadBalancerSourceRanges'], `may only be used when type is LoadBalancer, not ${type}`);
  }
  raw.forEach((t, i) => {
    const c = r.cidr(['spec', 'loadBalancerSourceRanges', i], typeof t === 'string' ? t.trim() : t, false);
    if (c) out.push(c);
  });
  return out;
}

/** status.loadBalancer.ingress[].ip; ipMode Proxy means the load balancer proxies, so its VIP is not short-circuited here. */
function ingressIPs(r: Reporter, v: Fields): IP[] {
  const out: IP[] = [];
  list(fields(fields(v.status).loadBalancer).ingress).forEach((item, i) => {
    const ing = fields(item);
    if (ing.ip === undefined || ing.ip === '') return;
    const ip = r.ip(['status', 'loadBalancer', 'ingress', i, 'ip'], ing.ip);
    if (ip && ing.ipMode !== 'Proxy') out.push(ip);
  });
  return out;
}

function affinityTimeout(r: Reporter, spec: Fields): number | undefined {
  if (spec.sessionAffinity !== 'ClientIP') {
    if (spec.sessionAffinityConfig !== undefined && spec.sessionAffinityConfig !== null) {
      r.report(['spec', 'sessionAffinityConfig'], `must not be set when sessionAffinity is ${str(spec.sessionAffinity) ?? 'None'}`);
    }
    return undefined;
  }
  return int(fields(fields(spec.sessionAffinityConfig).clientIP).timeoutSeconds) ?? DEFAULT_AFFINITY_TIMEOUT;
}

export function decodeService(r: Reporter, value: unknown): DecodedService | null {
  const v = fields(value);
  const meta = checkMetadata(r, v, dns1035LabelProblem, true);
  const spec = fields(v.spec);
  const type = str(spec.type) ?? 'ClusterIP';
  const firstIP = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0 ? spec.clusterIPs[0] : spec.clusterIP;
  const noVIP = type === 'ExternalName' || firstIP === undefined || firstIP === '' || firstIP === 'None';
  const ips = type === 'ExternalName' ? [] : clusterIPs(r, spec, noVIP);
  const portList = ports(r, spec, type, !noVIP);
  const external = externalIPs(r, spec);
  const ranges = sourceRanges(r, spec, type);
  const ingress = ingressIPs(r, v);
  const timeout = affinityTimeout(r, spec);
  if (!r.ok || !meta) return null;

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
