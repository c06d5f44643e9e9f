// EndpointSlices (and legacy v1 Endpoints) to endpoint sets, with the API server's rules
// (ValidateEndpointSlice, ValidateEndpoints) for every field kproxc reads.
import type { Reporter } from '../check/collector.js';
import { bool, fields, int, list, str, type Fields } from '../check/fields.js';
import { checkMetadata } from '../check/metadata.js';
import { dnsLabelProblem, dnsSubdomainProblem, labelValueProblem } from '../check/names.js';
import type { FieldPath } from '../input/source.js';
import type { IP, IPFamily } from '../net/ip.js';
import type { DecodedEndpoint, DecodedEndpointSet } from './decode.js';
import type { Protocol } from './types.js';

const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
// kube-proxy's informers select only objects without these labels.
const IGNORED_LABELS = ['service.kubernetes.io/service-proxy-name', 'service.kubernetes.io/headless'];

/** ports[]: names are DNS-1123 labels, unique; a port without a number is ignored, as kube-proxy does. */
function endpointPorts(r: Reporter, raw: unknown, path: FieldPath, nameRequired: boolean): DecodedEndpointSet['ports'] {
  const out: DecodedEndpointSet['ports'] = [];
  const names = new Set<string>();
  const items = list(raw);
  items.forEach((item, i) => {
    const p = fields(item);
    const name = p.name === undefined || p.name === null ? '' : r.text([...path, i, 'name'], p.name) ?? '';
    if (name !== '') {
      const problem = dnsLabelProblem(name);
      if (problem) r.report([...path, i, 'name'], problem);
      else if (names.has(name)) r.report([...path, i, 'name'], `duplicate port name ${JSON.stringify(name)}`);
      names.add(name);
    } else if (nameRequired && items.length > 1) r.report([...path, i, 'name'], 'required when there is more than one port');
    const port = int(p.port);
    if (port !== undefined) out.push({ name, port, protocol: (str(p.protocol) ?? 'TCP') as Protocol });
  });
  return out;
}

function nodeName(r: Reporter, path: FieldPath, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const s = r.text(path, value);
  const problem = s === null ? null : dnsSubdomainProblem(s);
  if (problem) r.report(path, problem);
  return s ?? undefined;
}

function hintNames(r: Reporter, raw: unknown, path: FieldPath, rule: (s: string) => string | null): string[] | undefined {
  const items = list(raw);
  if (items.length === 0) return undefined;
  const out: string[] = [];
  items.forEach((h, i) => {
    const s = r.text([...path, i, 'name'], fields(h).name);
    const problem = s === null ? null : rule(s);
    if (problem) r.report([...path, i, 'name'], problem);
    else if (s !== null) out.push(s);
  });
  return out;
}

function sliceEndpoint(r: Reporter, e: Fields, i: number, family: IPFamily): DecodedEndpoint | null {
  const at = (...p: (string | number)[]): FieldPath => ['endpoints', i, ...p];
  // Every address is checked, as the API server does; kube-proxy uses the first.
  const ips = list(e.addresses).map((a, j) => r.ip(at('addresses', j), a, { family, nonSpecial: true }));
  const node = nodeName(r, at('nodeName'), e.nodeName);
  if (e.zone !== undefined && e.zone !== null) {
    const zone = r.text(at('zone'), e.zone);
    const problem = zone === null ? null : labelValueProblem(zone);
    if (problem) r.report(at('zone'), problem);
  }
  const hints = fields(e.hints);
  const zoneHints = hintNames(r, hints.forZones, at('hints', 'forZones'), labelValueProblem);
  const nodeHints = hintNames(r, hints.forNodes, at('hints', 'forNodes'), dnsSubdomainProblem);
  const ip: IP | null = ips[0] ?? null;
  if (!ip) return null;
  const c = fields(e.conditions);
  const ready = bool(c.ready) ?? true;
  // The API defaults a missing serving condition to the ready one.
  const serving = bool(c.serving) ?? ready;
  return { ip, nodeName: node, ready, serving, terminating: c.terminating === true, zoneHints, nodeHints };
}

export interface DecodedSlice {
  set?: DecodedEndpointSet;
  /** Why the slice is left out although it is valid. */
  skip?: { path: FieldPath; reason: string; warn: boolean };
}

export function decodeEndpointSlice(r: Reporter, value: unknown): DecodedSlice | null {
  const v = fields(value);
  const meta = checkMetadata(r, v, dnsSubdomainProblem, true);
  const addressType = v.addressType;
  if (addressType === 'FQDN') {
    return r.ok ? { skip: { path: ['addressType'], reason: 'FQDN EndpointSlices are not proxied; skipped', warn: true } } : null;
  }
  const family: IPFamily = addressType === 'IPv6' ? 6 : 4;
  const endpoints: DecodedEndpoint[] = [];
  list(v.endpoints).forEach((e, i) => {
    const ep = sliceEndpoint(r, fields(e), i, family);
    if (ep) endpoints.push(ep);
  });
  const ports = endpointPorts(r, v.ports, ['ports'], false);
  if (!r.ok || !meta) return null;
  const ignoredBy = IGNORED_LABELS.find((l) => Object.hasOwn(meta.labels, l));
  if (ignoredBy) return { skip: { path: ['metadata', 'labels', ignoredBy], reason: `labelled ${ignoredBy}`, warn: false } };
  const service = meta.labels[LABEL_SERVICE_NAME];
  if (service === undefined) {
    return { skip: { path: ['metadata', 'labels'], reason: `has no ${LABEL_SERVICE_NAME} label; skipped`, warn: true } };
  }
  return { set: { namespace: meta.namespace, service, family, legacy: false, endpoints, ports, pos: r.source.locate(['metadata', 'name']), object: `${meta.namespace}/${meta.name}` } };
}

/** v1 Endpoints: one set per subset and family; subsets[].addresses are ready, notReadyAddresses are not. */
export function decodeLegacyEndpoints(r: Reporter, value: unknown): DecodedEndpointSet[] {
  const v = fields(value);
  const meta = checkMetadata(r, v, dnsSubdomainProblem, true);
  const out: DecodedEndpointSet[] = [];
  list(v.subsets).forEach((item, si) => {
    const s = fields(item);
    const ports = endpointPorts(r, s.ports, ['subsets', si, 'ports'], true);
    const byFamily = new Map<IPFamily, DecodedEndpoint[]>();
    for (const [field, ready] of [['addresses', true], ['notReadyAddresses', false]] as const) {
      list(s[field]).forEach((a, i) => {
        const addr = fields(a);
        const ip = r.ip(['subsets', si, field, i, 'ip'], addr.ip, { nonSpecial: true });
        const node = nodeName(r, ['subsets', si, field, i, 'nodeName'], addr.nodeName);
        if (!ip) return;
        const eps = byFamily.get(ip.family) ?? [];
        eps.push({ ip, nodeName: node, ready, serving: ready, terminating: false });
        byFamily.set(ip.family, eps);
      });
    }
    for (const [family, endpoints] of byFamily) {
      if (!meta) continue;
      const pos = r.source.locate(['metadata', 'name']);
      out.push({ namespace: meta.namespace, service: meta.name, family, legacy: true, endpoints, ports, pos, object: `${meta.namespace}/${meta.name}` });
    }
  });
  return r.ok && meta ? out : [];
}
