// EndpointSlices (and legacy v1 Endpoints) to endpoint sets, with the API server's rules
// (ValidateEndpointSlice, ValidateEndpoints) for every field kproxc reads.
import { acceptedIP, type IPRule, type Reporter } from '../check/collector.js';
import { bool, fields, int, list, str, type Fields } from '../check/fields.js';
import { checkMetadata } from '../check/metadata.js';
import { dnsLabelProblem, dnsSubdomainProblem, labelValueProblem } from '../check/names.js';
import type { FieldPath } from '../input/source.js';
import { formatIP, type IP, type IPFamily } from '../net/ip.js';
import type { DecodedEndpointSet } from './decode.js';
import type { Endpoint, Protocol } from './types.js';

/** One endpoint of a slice (or an Endpoints subset) as read, before it is made one per port. */
interface DecodedEndpoint {
  ip: IP;
  /** The address's canonical text (as written, unless it was read as kube-proxy reads a sloppy one). */
  address: string;
  nodeName?: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints?: string[];
  nodeHints?: string[];
}

/** "ip:port", IPv6 in brackets: kube-proxy's sort key; `address` is the canonical text of `ip`. */
function endpointKey(ip: IP, address: string, port: number): string {
  // join makes one flat string; a template makes a chain of pieces that every comparison
  // and hash of the key must first copy into one.
  return ip.family === 6 ? `[${address}]:${port}` : [address, port].join(':');
}

/** The model's endpoints, one list per port, and the node of each (see DecodedEndpointSet). */
function modelEndpoints(eps: DecodedEndpoint[], ports: DecodedEndpointSet['ports']): Pick<DecodedEndpointSet, 'endpoints' | 'nodeNames'> {
  const nodeNames = eps.map((e) => e.nodeName);
  const endpoints = ports.map((p) =>
    eps.map(
      (e): Endpoint => ({
        ip: e.ip,
        port: p.port,
        key: endpointKey(e.ip, e.address, p.port),
        isLocal: false, // filled in by the model
        ready: e.ready,
        serving: e.serving,
        terminating: e.terminating,
        zoneHints: e.zoneHints ? new Set(e.zoneHints) : undefined,
        nodeHints: e.nodeHints ? new Set(e.nodeHints) : undefined,
      }),
    ),
  );
  return { endpoints, nodeNames };
}

const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
// kube-proxy's informers select only objects without these labels.
const IGNORED_LABELS = ['service.kubernetes.io/service-proxy-name', 'service.kubernetes.io/headless'];

// Paths of fields are built only to report a problem there: a snapshot has a few hundred
// thousand endpoint fields, and nearly all of them are fine.

/** ports[]: names are DNS-1123 labels, unique; a port without a number is ignored, as kube-proxy does. */
function endpointPorts(r: Reporter, raw: unknown, path: FieldPath, nameRequired: boolean): DecodedEndpointSet['ports'] {
  const out: DecodedEndpointSet['ports'] = [];
  const names = new Set<string>();
  const items = list(raw);
  for (let i = 0; i < items.length; i++) {
    const p = fields(items[i]);
    const name = p.name === undefined || p.name === null ? '' : typeof p.name === 'string' ? p.name : r.text([...path, i, 'name'], p.name) ?? '';
    if (name !== '') {
      const problem = dnsLabelProblem(name);
      if (problem) r.warn([...path, i, 'name'], `${problem}${COMPARED_AS_IS}`);
      if (names.has(name)) r.report([...path, i, 'name'], `duplicate port name ${JSON.stringify(name)}`);
      names.add(name);
    } else if (nameRequired && items.length > 1) {
      // kube-proxy matches endpoint ports to Service ports by name: one unnamed port is
      // still told apart, a second one is ambiguous.
      if (names.has('')) r.report([...path, i, 'name'], 'duplicate port name "" (required when there is more than one port)');
      else r.warn([...path, i, 'name'], 'required when there is more than one port (the API server refuses it without); matched to the Service port without a name, as kube-proxy matches it');
      names.add('');
    }
    const port = int(p.port);
    if (port !== undefined) out.push({ name, port, protocol: (str(p.protocol) ?? 'TCP') as Protocol });
  }
  return out;
}

/**
 * Endpoint port names, node names, zones and hints never reach a rule: kube-proxy compares
 * them with the Service's port names and the node's name and labels, as they are. A
 * malformed one (which the API server refuses) is a warning.
 */
const COMPARED_AS_IS = ' (the API server refuses it; kube-proxy compares it as it is)';

function nodeName(r: Reporter, path: FieldPath, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (isKnownNodeName(value)) return value;
  const s = r.text(path, value);
  const problem = s === null ? null : dnsSubdomainProblem(s);
  if (problem) r.warn(path, `${problem}${COMPARED_AS_IS}`);
  return s ?? undefined;
}

// Node names recur on every endpoint of their node: each is checked once.
const knownNodeNames = new Set<string>();
const MAX_KNOWN_NODE_NAMES = 10000;

/** True for a string that is a valid node name (nothing to report). */
function isKnownNodeName(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  if (knownNodeNames.has(v)) return true;
  if (dnsSubdomainProblem(v) !== null) return false;
  if (knownNodeNames.size >= MAX_KNOWN_NODE_NAMES) knownNodeNames.clear();
  knownNodeNames.add(v);
  return true;
}

function hintNames(r: Reporter, raw: unknown, path: FieldPath, rule: (s: string) => string | null): string[] | undefined {
  const items = list(raw);
  if (items.length === 0) return undefined;
  const out: string[] = [];
  items.forEach((h, i) => {
    const s = r.text([...path, i, 'name'], fields(h).name);
    const problem = s === null ? null : rule(s);
    if (problem) r.warn([...path, i, 'name'], `${problem}${COMPARED_AS_IS}`);
    if (s !== null) out.push(s);
  });
  return out;
}

function endpointField(i: number, ...p: (string | number)[]): FieldPath {
  return ['endpoints', i, ...p];
}

function sliceEndpoint(r: Reporter, e: Fields, i: number, rule: IPRule): DecodedEndpoint | null {
  // Every address is checked, as the API server does; kube-proxy uses the first.
  const addresses = list(e.addresses);
  let ip: IP | null = null;
  let address = '';
  for (let j = 0; j < addresses.length; j++) {
    const accepted = acceptedIP(addresses[j], rule);
    const a = accepted ?? r.ip(endpointField(i, 'addresses', j), addresses[j], rule);
    if (j > 0 || !a) continue;
    ip = a;
    // An address taken at once is written canonically; only one read as kube-proxy reads a
    // sloppy one needs its text made.
    address = accepted ? (addresses[j] as string) : formatIP(a);
  }
  const node = isKnownNodeName(e.nodeName) ? e.nodeName : nodeName(r, endpointField(i, 'nodeName'), e.nodeName);
  if (e.zone !== undefined && e.zone !== null) {
    const zone = r.text(endpointField(i, 'zone'), e.zone);
    const problem = zone === null ? null : labelValueProblem(zone);
    if (problem) r.warn(endpointField(i, 'zone'), `${problem}${COMPARED_AS_IS}`);
  }
  let zoneHints: string[] | undefined;
  let nodeHints: string[] | undefined;
  if (e.hints !== undefined) {
    const hints = fields(e.hints);
    zoneHints = hintNames(r, hints.forZones, endpointField(i, 'hints', 'forZones'), labelValueProblem);
    nodeHints = hintNames(r, hints.forNodes, endpointField(i, 'hints', 'forNodes'), dnsSubdomainProblem);
  }
  if (!ip) return null;
  const c = fields(e.conditions);
  const ready = bool(c.ready) ?? true;
  // The API defaults a missing serving condition to the ready one.
  const serving = bool(c.serving) ?? ready;
  return { ip, address, nodeName: node, ready, serving, terminating: c.terminating === true, zoneHints, nodeHints };
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
  const rule: IPRule = { family, nonSpecial: true };
  const endpoints: DecodedEndpoint[] = [];
  const raw = list(v.endpoints);
  for (let i = 0; i < raw.length; i++) {
    const ep = sliceEndpoint(r, fields(raw[i]), i, rule);
    if (ep) endpoints.push(ep);
  }
  const ports = endpointPorts(r, v.ports, ['ports'], false);
  if (!r.ok || !meta) return null;
  const ignoredBy = IGNORED_LABELS.find((l) => Object.hasOwn(meta.labels, l));
  if (ignoredBy) return { skip: { path: ['metadata', 'labels', ignoredBy], reason: `labelled ${ignoredBy}`, warn: false } };
  const service = meta.labels[LABEL_SERVICE_NAME];
  if (service === undefined) {
    return { skip: { path: ['metadata', 'labels'], reason: `has no ${LABEL_SERVICE_NAME} label; skipped`, warn: true } };
  }
  const pos = r.source.locate(['metadata', 'name']);
  return { set: { namespace: meta.namespace, service, family, legacy: false, ports, ...modelEndpoints(endpoints, ports), pos, object: `${meta.namespace}/${meta.name}` } };
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
        eps.push({ ip, address: formatIP(ip), nodeName: node, ready, serving: ready, terminating: false });
        byFamily.set(ip.family, eps);
      });
    }
    for (const [family, endpoints] of byFamily) {
      if (!meta) continue;
      const pos = r.source.locate(['metadata', 'name']);
      out.push({ namespace: meta.namespace, service: meta.name, family, legacy: true, ports, ...modelEndpoints(endpoints, ports), pos, object: `${meta.namespace}/${meta.name}` });
    }
  });
  return r.ok && meta ? out : [];
}
