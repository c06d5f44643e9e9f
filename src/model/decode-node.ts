// v1 Node and ServiceCIDR: the node's IPs and Pod CIDRs, and the Service IP ranges. Pod
// CIDRs and Service CIDRs must be networks (no host bits), at most one per family.
import type { Reporter } from '../check/collector.js';
import { fields, list, type Fields } from '../check/fields.js';
import { checkMetadata } from '../check/metadata.js';
import { dnsSubdomainProblem } from '../check/names.js';
import type { FieldPath } from '../input/source.js';
import type { CIDR, IP } from '../net/ip.js';
import type { DecodedNode } from './decode.js';

/** CIDRs of which there may be one per family (podCIDRs, ServiceCIDR cidrs). */
function cidrsOnePerFamily(r: Reporter, raw: unknown[], pathOf: (i: number) => FieldPath): CIDR[] {
  const out: CIDR[] = [];
  raw.forEach((t, i) => {
    const c = r.cidr(pathOf(i), t, true);
    if (!c) return;
    if (out.some((x) => x.addr.family === c.addr.family)) r.report(pathOf(i), `a second IPv${c.addr.family} CIDR (at most one per family)`);
    else out.push(c);
  });
  return out;
}

export function decodeNode(r: Reporter, value: unknown): DecodedNode | null {
  const v = fields(value);
  const meta = checkMetadata(r, v, dnsSubdomainProblem, false);
  const spec = fields(v.spec);
  const many = Array.isArray(spec.podCIDRs) && spec.podCIDRs.length > 0;
  if (many && spec.podCIDR !== undefined && spec.podCIDR !== '' && (spec.podCIDRs as unknown[])[0] !== spec.podCIDR) {
    r.report(['spec', 'podCIDR'], 'must equal spec.podCIDRs[0]');
  }
  const texts = many ? list(spec.podCIDRs) : spec.podCIDR !== undefined && spec.podCIDR !== '' ? [spec.podCIDR] : [];
  const podCIDRs = cidrsOnePerFamily(r, texts, (i) => (many ? ['spec', 'podCIDRs', i] : ['spec', 'podCIDR']));
  const internalIPs: IP[] = [];
  const externalIPs: IP[] = [];
  list(fields(v.status).addresses).forEach((item, i) => {
    const a = fields(item);
    // Other address types (Hostname, InternalDNS, ExternalDNS) hold names, and kproxc does not read them.
    if (a.type !== 'InternalIP' && a.type !== 'ExternalIP') return;
    const ip = r.ip(['status', 'addresses', i, 'address'], a.address);
    if (ip) (a.type === 'InternalIP' ? internalIPs : externalIPs).push(ip);
  });
  if (!r.ok || !meta) return null;
  return { name: meta.name, labels: meta.labels, podCIDRs, internalIPs, externalIPs, version: reportedVersion(fields(fields(v.status).nodeInfo)) };
}

/**
 * The node's kube-proxy version: nodeInfo.kubeProxyVersion where the kubelet still fills
 * it in (it is deprecated, and empty on current nodes), else the kubelet's version, which
 * every dump carries and kube-proxy matches in any supported cluster. Checked only when it
 * decides the table (no --kube-proxy-version).
 */
function reportedVersion(info: Fields): DecodedNode['version'] {
  for (const field of ['kubeProxyVersion', 'kubeletVersion'] as const) {
    const text = info[field];
    if (typeof text === 'string' && text !== '') return { text, field };
  }
  return undefined;
}

export function decodeServiceCIDR(r: Reporter, value: unknown): CIDR[] {
  const v = fields(value);
  checkMetadata(r, v, dnsSubdomainProblem, false);
  const cidrs = cidrsOnePerFamily(r, list(fields(v.spec).cidrs), (i) => ['spec', 'cidrs', i]);
  return r.ok ? cidrs : [];
}
