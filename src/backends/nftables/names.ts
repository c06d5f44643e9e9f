// Every name kproxc gives an nftables object, declared once (kube-proxy's constant block),
// the hash-and-truncate naming of per-Service-port and per-endpoint chains, byte for byte
// as kube-proxy's nftables proxier makes them, and those chain names read back.
import { hash } from 'node:crypto';
import { formatIP, parseIP, type IP } from '../../net/ip.js';
import { writeDecimal, writeIPv4 } from '../../io/digits.js';
import type { Endpoint, Protocol, ServicePortName } from '../../model/types.js';

export const TABLE_NAME = 'kube-proxy';
export const TABLE_COMMENT = 'rules for kube-proxy';

// base chains, named "${type}-${hook}"
export const FILTER_PREROUTING = 'filter-prerouting';
export const FILTER_INPUT = 'filter-input';
export const FILTER_FORWARD = 'filter-forward';
export const FILTER_OUTPUT = 'filter-output';
export const FILTER_OUTPUT_POST_DNAT = 'filter-output-post-dnat';
export const NAT_PREROUTING = 'nat-prerouting';
export const NAT_OUTPUT = 'nat-output';
export const NAT_POSTROUTING = 'nat-postrouting';

// service dispatch
export const SERVICES_CHAIN = 'services';
export const SERVICE_IPS_MAP = 'service-ips';
export const SERVICE_NODEPORTS_MAP = 'service-nodeports';
/** IPs that accept NodePort traffic, when nodePortAddresses does not select every address. */
export const NODEPORT_IPS_SET = 'nodeport-ips';
export const CLUSTER_IPS_SET = 'cluster-ips';

// services without endpoints
export const SERVICE_ENDPOINTS_CHECK_CHAIN = 'service-endpoints-check';
export const NODEPORT_ENDPOINTS_CHECK_CHAIN = 'nodeport-endpoints-check';
export const NO_ENDPOINT_SERVICES_MAP = 'no-endpoint-services';
export const NO_ENDPOINT_NODEPORTS_MAP = 'no-endpoint-nodeports';
export const REJECT_CHAIN = 'reject-chain';

/** Unallocated ClusterIPs and undefined ports of ClusterIPs. */
export const CLUSTER_IPS_CHECK_CHAIN = 'cluster-ips-check';

// loadBalancerSourceRanges
export const FIREWALL_IPS_MAP = 'firewall-ips';
export const FIREWALL_CHECK_CHAIN = 'firewall-check';

// masquerading
export const MARK_MASQ_CHAIN = 'mark-for-masquerade';
export const MASQUERADING_CHAIN = 'masquerading';
/** 1.36 on: the node's endpoints, as the connections they make to themselves through a Service. */
export const HAIRPIN_SET = 'hairpin-connections';

// per-Service-port and per-endpoint prefixes (each at most 16 bytes with its hyphen)
const CLUSTER_POLICY_PREFIX = 'service-';
const LOCAL_POLICY_PREFIX = 'local-';
const EXTERNAL_PREFIX = 'external-';
const FIREWALL_PREFIX = 'firewall-';
const ENDPOINT_PREFIX = 'endpoint-';
const AFFINITY_PREFIX = 'affinity-';
const AFFINITY_RECORD_PREFIX = 'affinity-record-';

/** The base32 characters of the hash that follows a prefix, then "-". */
const HASH_WIDTH = 8;

const NAME_LENGTH_MAX = 256;
const CHAIN_NAME_PREFIX_LENGTH_MAX = 16;
const CHAIN_NAME_BASE_LENGTH_MAX = NAME_LENGTH_MAX - CHAIN_NAME_PREFIX_LENGTH_MAX;

// The base32 alphabet as character codes.
const BASE32 = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'].map((c) => c.charCodeAt(0));

/**
 * One-shot sha256 to a 'binary' (latin1) string, one character per byte: a Hash object, or
 * a Buffer for the digest, costs more than the hashing itself.
 */
function sha256(data: string | Uint8Array): string {
  return hash('sha256', data, 'binary');
}

/** The first 8 characters of the standard base32 encoding of a digest, as character codes. */
function base32Codes(digest: string, out: (code: number, i: number) => void): void {
  const b0 = digest.charCodeAt(0);
  const b1 = digest.charCodeAt(1);
  const b2 = digest.charCodeAt(2);
  const b3 = digest.charCodeAt(3);
  const b4 = digest.charCodeAt(4);
  // 8 base32 characters encode exactly the first 40 bits (5 bytes), 5 bits each.
  out(BASE32[b0 >> 3], 0);
  out(BASE32[((b0 & 7) << 2) | (b1 >> 6)], 1);
  out(BASE32[(b1 >> 1) & 31], 2);
  out(BASE32[((b1 & 1) << 4) | (b2 >> 4)], 3);
  out(BASE32[((b2 & 15) << 1) | (b3 >> 7)], 4);
  out(BASE32[(b3 >> 2) & 31], 5);
  out(BASE32[((b3 & 3) << 3) | (b4 >> 5)], 6);
  out(BASE32[b4 & 31], 7);
}

/** The first 8 characters of the standard base32 encoding of sha256(name). */
export function hashPrefix(name: string): string {
  const codes: number[] = [];
  base32Codes(sha256(name), (c) => codes.push(c));
  return String.fromCharCode(...codes);
}

/**
 * Prefixes a name with a hash of itself, then truncates it: the hash keeps truncated names
 * unique and makes names that differ in one digit easy to tell apart.
 */
export function hashAndTruncate(name: string): string {
  let out = [hashPrefix(name), '-', name].join('');
  if (out.length > CHAIN_NAME_BASE_LENGTH_MAX) out = out.slice(0, CHAIN_NAME_BASE_LENGTH_MAX - 3) + '...';
  return out;
}

/**
 * Prefix and base as one flat string. Joined, not added: `+` makes a pair that the chain
 * map flattens into a copy anyway, 100,000 times.
 */
function prefixed(prefix: string, base: string): string {
  return [prefix, base].join('');
}

/** "HASH-namespace/name/protocol/portName", e.g. "ULMVA6XW-ns1/svc1/tcp/p80". */
export function servicePortChainNameBase(id: ServicePortName): string {
  return hashAndTruncate(servicePortText(id).join(''));
}

const lowerProtocol = (p: string) => (p === 'TCP' ? 'tcp' : p === 'UDP' ? 'udp' : p === 'SCTP' ? 'sctp' : p.toLowerCase());

// The pieces of the hashed names, joined into one flat string: a template literal would
// make a tree of a dozen string pieces that hashing, and then the chain map, flatten
// again for each of 100,000 endpoints.
function servicePortText(id: ServicePortName): string[] {
  return [id.namespace, '/', id.name, '/', lowerProtocol(id.protocol), '/', id.port];
}

/** "HASH-namespace/name/protocol/portName__IP/port"; an IPv6 address has ":" turned into ".". */
export function endpointChainNameBase(id: ServicePortName, ep: Endpoint): string {
  const ip = ep.ip.family === 4 ? formatIP(ep.ip) : formatIP(ep.ip).replaceAll(':', '.');
  const text = servicePortText(id);
  text.push('__', ip, '/', String(ep.port));
  return hashAndTruncate(text.join(''));
}

export interface ServicePortChains {
  clusterPolicy: string;
  localPolicy: string;
  external: string;
  firewall: string;
}

export function servicePortChains(id: ServicePortName): ServicePortChains {
  const base = servicePortChainNameBase(id);
  return {
    clusterPolicy: prefixed(CLUSTER_POLICY_PREFIX, base),
    localPolicy: prefixed(LOCAL_POLICY_PREFIX, base),
    external: prefixed(EXTERNAL_PREFIX, base),
    firewall: prefixed(FIREWALL_PREFIX, base),
  };
}

/**
 * fast-load's chain that records the clients of a Service port with affinity after NAT
 * (fast-load/affinity-records.ts): "affinity-record-HASH-ns/svc/tcp/p80", the base of the
 * port's own chains.
 */
export function affinityRecordChain(chains: ServicePortChains): string {
  return prefixed(AFFINITY_RECORD_PREFIX, chains.clusterPolicy.slice(CLUSTER_POLICY_PREFIX.length));
}

/** An endpoint's chain and affinity set, which share one hashed base. */
export interface EndpointNames {
  chain: string;
  affinitySet: string;
}

export function endpointNames(id: ServicePortName, ep: Endpoint): EndpointNames {
  const base = endpointChainNameBase(id, ep);
  return names(prefixed(ENDPOINT_PREFIX, base));
}

// Most endpoints have no affinity set: its name is left for whoever uses it to flatten.
const names = (chain: string): EndpointNames => ({ chain, affinitySet: AFFINITY_PREFIX + chain.slice(ENDPOINT_PREFIX.length) });

/**
 * endpointNames for the endpoints of one Service port, made in a buffer of bytes: the
 * chain prefix is there, the Service port's part is copied in, then each endpoint's
 * address and port, the hash is taken of those bytes and written in, and the name read
 * back as one string. Made from strings, each of 100,000 names at 10,000 Services left a
 * dozen strings behind. Text that is not ASCII, and names long enough to be truncated,
 * take endpointNames' way.
 */
export function endpointNamer(id: ServicePortName): (ep: Endpoint) => EndpointNames {
  const headText = `${servicePortText(id).join('')}__`;
  if (!/^[\x20-\x7e]*$/.test(headText) || headText.length > CHAIN_NAME_BASE_LENGTH_MAX) return (ep) => endpointNames(id, ep);
  const head = Buffer.from(headText, 'latin1');
  return (ep) => {
    const buf = nameBytes;
    buf.set(head, TEXT_AT);
    let at = TEXT_AT + head.length;
    if (ep.ip.family === 4) at = writeIPv4(buf, at, ep.ip.bytes);
    else at += buf.write(formatIP(ep.ip).replaceAll(':', '.'), at, 'latin1');
    buf[at++] = 0x2f; // '/'
    if (!(Number.isInteger(ep.port) && ep.port >= 0 && ep.port <= 0x7fffffff)) return endpointNames(id, ep);
    at = writeDecimal(buf, at, ep.port);
    if (at - HASH_AT > CHAIN_NAME_BASE_LENGTH_MAX) return endpointNames(id, ep);
    base32Codes(sha256(textView(at - TEXT_AT)), putHash);
    return names(buf.toString('latin1', 0, at));
  };
}

// endpointNamer's buffer: "endpoint-HASHHASH-" then the text that is hashed, room for the
// longest. Views of the text, one per length, are made once.
const nameBytes = Buffer.allocUnsafeSlow(ENDPOINT_PREFIX.length + CHAIN_NAME_BASE_LENGTH_MAX + 64);
const HASH_AT = nameBytes.write(ENDPOINT_PREFIX, 0, 'latin1');
const TEXT_AT = HASH_AT + HASH_WIDTH + 1;
nameBytes[TEXT_AT - 1] = 0x2d; // '-'
const textViews: Uint8Array[] = [];
const textView = (n: number) => (textViews[n] ??= new Uint8Array(nameBytes.buffer, nameBytes.byteOffset + TEXT_AT, n));
const putHash = (code: number, i: number) => {
  nameBytes[HASH_AT + i] = code;
};

export function endpointChain(id: ServicePortName, ep: Endpoint): string {
  return ENDPOINT_PREFIX + endpointChainNameBase(id, ep);
}

export function affinitySet(id: ServicePortName, ep: Endpoint): string {
  return AFFINITY_PREFIX + endpointChainNameBase(id, ep);
}

// Reading the names back, for what reads a live table by its chains (the conntrack
// clean-up). Each parser is the inverse of the builder above for every name a snapshot
// can give: a namespace and Service name hold no "/" (DNS labels), an address no "_" or
// "/", so the Service port's text splits at its first three "/" and an endpoint's tail at
// its last "__" and "/". The hash is not checked. A truncated name ("...", only endpoint
// names of the longest Service ports with IPv6 addresses) cannot be read back: undefined.

const PROTOCOLS: Protocol[] = ['TCP', 'UDP', 'SCTP'];
const PROTOCOL_OF = new Map(PROTOCOLS.map((p) => [lowerProtocol(p), p]));

const SERVICE_PORT_PREFIXES: [keyof ServicePortChains, string][] = [
  ['clusterPolicy', CLUSTER_POLICY_PREFIX],
  ['localPolicy', LOCAL_POLICY_PREFIX],
  ['external', EXTERNAL_PREFIX],
  ['firewall', FIREWALL_PREFIX],
];

const isBase32 = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x32 && c <= 0x37);

/** What follows "PREFIX" and the hash's "HASHHASH-", or undefined when the name is not made so. */
function hashedText(name: string, prefix: string): string | undefined {
  if (!name.startsWith(prefix) || name.charCodeAt(prefix.length + HASH_WIDTH) !== 0x2d) return undefined;
  for (let i = prefix.length; i < prefix.length + HASH_WIDTH; i++) if (!isBase32(name.charCodeAt(i))) return undefined;
  return name.slice(prefix.length + HASH_WIDTH + 1);
}

/** "namespace/name/protocol/portName" (servicePortText) back into the Service port. */
function servicePortOf(text: string): ServicePortName | undefined {
  const a = text.indexOf('/');
  const b = a < 0 ? -1 : text.indexOf('/', a + 1);
  const c = b < 0 ? -1 : text.indexOf('/', b + 1);
  const protocol = c < 0 ? undefined : PROTOCOL_OF.get(text.slice(b + 1, c));
  return protocol && { namespace: text.slice(0, a), name: text.slice(a + 1, b), port: text.slice(c + 1), protocol };
}

/** A per-Service-port chain's name read back: which of servicePortChains' chains it is, and whose. */
export interface ParsedServicePortChain {
  chain: keyof ServicePortChains;
  id: ServicePortName;
}

/** servicePortChains read back: "service-HASH-ns/svc/udp/dns" is the cluster-policy chain of ns/svc:dns over UDP. */
export function parseServicePortChain(name: string): ParsedServicePortChain | undefined {
  for (const [chain, prefix] of SERVICE_PORT_PREFIXES) {
    const text = hashedText(name, prefix);
    if (text === undefined) continue;
    const id = servicePortOf(text);
    return id && { chain, id };
  }
  return undefined;
}

/** An endpoint chain's name read back: the Service port, and the endpoint's address and port. */
export interface ParsedEndpointChain {
  id: ServicePortName;
  ip: IP;
  port: number;
}

/** endpointNames' chain read back: "endpoint-HASH-ns/svc/udp/dns__fd00.10..1/53" is [fd00:10::1]:53 of ns/svc:dns over UDP. */
export function parseEndpointChain(name: string): ParsedEndpointChain | undefined {
  const text = hashedText(name, ENDPOINT_PREFIX);
  if (text === undefined) return undefined;
  const slash = text.lastIndexOf('/');
  const sep = text.lastIndexOf('__', slash);
  const portText = text.slice(slash + 1);
  if (slash < 0 || sep < 0 || !/^(0|[1-9][0-9]*)$/.test(portText)) return undefined;
  const id = servicePortOf(text.slice(0, sep));
  const ip = addressOf(text.slice(sep + 2, slash));
  return id && ip && { id, ip, port: Number(portText) };
}

/** An address as endpoint names write it: IPv4 as it is, IPv6 with "." for ":". */
function addressOf(text: string): IP | undefined {
  const v4 = parseIP(text);
  if (v4) return v4.family === 4 ? v4 : undefined;
  const v6 = parseIP(text.replaceAll('.', ':'));
  return v6?.family === 6 ? v6 : undefined;
}
