// KubeProxyConfiguration: the fields kproxc reads, checked as kube-proxy's own
// validation does. Nothing is trimmed: kube-proxy splits clusterCIDR on "," and parses
// each part as it stands.
import type { Reporter } from '../check/collector.js';
import { bool, fields, int, list, str } from '../check/fields.js';
import { dnsSubdomainProblem, interfaceNameProblem } from '../check/names.js';
import type { CIDR } from '../net/ip.js';
import type { DecodedProxyConfig } from './decode.js';
import type { TypedObject } from '../schema/validate.js';

const DETECT_LOCAL_MODES = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];

function clusterCIDRs(r: Reporter, value: unknown): CIDR[] | undefined {
  const text = str(value);
  if (text === undefined || text === '') return undefined;
  const parts = text.split(',');
  const out: CIDR[] = [];
  for (const part of parts) {
    const c = r.cidr(['clusterCIDR'], part, false);
    if (c) out.push(c);
  }
  if (parts.length > 2) r.report(['clusterCIDR'], `at most two CIDRs (one per IP family), not ${parts.length}`);
  else if (out.length === 2 && out[0].addr.family === out[1].addr.family) r.report(['clusterCIDR'], 'two CIDRs must be of different IP families');
  return out;
}

function interfaceName(r: Reporter, path: string[], value: unknown, isPrefix: boolean): string | undefined {
  if (value === undefined || value === null || value === '') return undefined; // required only by its mode
  const s = r.text(path, value);
  const problem = s === null ? null : interfaceNameProblem(s, isPrefix);
  if (problem) r.report(path, problem);
  return s !== null && !problem ? s : undefined;
}

export function decodeProxyConfig(r: Reporter, value: unknown, obj: TypedObject): DecodedProxyConfig {
  const v = fields(value);
  const detect = fields(v.detectLocal);
  const given = ['bridgeInterface', 'interfaceNamePrefix'].filter((k) => detect[k] !== undefined && detect[k] !== '');
  const c: DecodedProxyConfig = { source: obj, detectLocalGiven: given };
  const host = str(v.hostnameOverride);
  if (host) {
    const problem = dnsSubdomainProblem(host);
    if (problem) r.report(['hostnameOverride'], problem);
    else c.hostnameOverride = host;
  }
  c.clusterCIDRs = clusterCIDRs(r, v.clusterCIDR);
  const mode = str(v.detectLocalMode);
  if (mode && DETECT_LOCAL_MODES.includes(mode)) c.detectLocalMode = mode; // anything else the schema refused
  c.bridgeInterface = interfaceName(r, ['detectLocal', 'bridgeInterface'], detect.bridgeInterface, false);
  c.interfaceNamePrefix = interfaceName(r, ['detectLocal', 'interfaceNamePrefix'], detect.interfaceNamePrefix, true);
  const npa = list(v.nodePortAddresses);
  if (npa.length === 1 && npa[0] === 'primary') c.nodePortAddresses = 'primary';
  else if (npa.length > 0) {
    c.nodePortCIDRs = [];
    npa.forEach((t, i) => {
      if (t === 'primary') r.report(['nodePortAddresses', i], '"primary" must be the only entry');
      else {
        const cidr = r.cidr(['nodePortAddresses', i], t, false);
        if (cidr) c.nodePortCIDRs!.push(cidr);
      }
    });
    c.nodePortAddresses = npa.filter((t): t is string => typeof t === 'string');
  }
  const nft = fields(v.nftables);
  const ipt = fields(v.iptables);
  c.masqueradeAll = bool(nft.masqueradeAll) ?? bool(ipt.masqueradeAll);
  c.masqueradeBit = int(nft.masqueradeBit) ?? int(ipt.masqueradeBit);
  return c;
}
