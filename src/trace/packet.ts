// The packet a trace follows, and how the trace names addresses and endpoints.
import { formatIP, isIPv4Mapped, parseIP, type IP } from '../net/ip.js';

export type L4Protocol = 'tcp' | 'udp' | 'sctp';
export const L4_PROTOCOLS: readonly L4Protocol[] = ['tcp', 'udp', 'sctp'];

/** The source port when none is given: any ephemeral port; no rule kproxc emits reads it. */
export const DEFAULT_SOURCE_PORT = 40000;

export interface TracePacket {
  protocol: L4Protocol;
  src: IP;
  dst: IP;
  sport: number;
  dport: number;
  /** The interface the packet arrives on. */
  iif?: string;
  /** Sent by the node itself (output hook) rather than arriving at it (prerouting). */
  fromNode?: boolean;
  /**
   * The client already has session affinity to this endpoint: an earlier connection of it
   * reached the endpoint, so the sets hold what that connection wrote. Without it the sets
   * are as after a fresh load (empty).
   */
  affinity?: { ip: IP; port: number };
}

/**
 * Why a packet cannot be traced under --family (undefined when it can): the rules of the
 * other family are not compiled, so the flag or the address is wrong, not the snapshot.
 */
export function familyMismatch(family: unknown, dst: IP): string | undefined {
  if (family !== 'ipv4' && family !== 'ipv6') return undefined;
  const wanted = family === 'ipv4' ? 4 : 6;
  if (dst.family === wanted) return undefined;
  return `is an IPv${dst.family} address, but --family ${family} compiles IPv${wanted} rules only: leave out --family, or trace an IPv${wanted} destination`;
}

/** Linux interface names: at most 15 bytes, no slash or white space. */
export const IFNAME_RE = /^[A-Za-z0-9_.:@+-]{1,15}$/;

/** "10.180.0.1:80", or "[fd00::1]:80" for IPv6 (kube-proxy's and Go's JoinHostPort form). */
export function hostPort(ip: IP, port: number): string {
  return ip.family === 6 ? `[${formatIP(ip)}]:${port}` : `${formatIP(ip)}:${port}`;
}

/** "ip:port" or "[ipv6]:port" (hostPort's forms) as an address and a port; null when it is neither. */
export function parseHostPort(s: string): { ip: IP; port: number } | null {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(s);
  if (!m) return null;
  const ip = parseIP(m[1] ?? m[2]);
  const port = Number(m[3]);
  if (!ip || isIPv4Mapped(ip) || (m[1] !== undefined) !== (ip.family === 6) || port < 1 || port > 65535) return null;
  return { ip, port };
}

export function packetText(p: TracePacket): string {
  return `${p.protocol} ${hostPort(p.src, p.sport)} → ${hostPort(p.dst, p.dport)}`;
}

export function packetJson(p: TracePacket): Record<string, string | number> {
  const out: Record<string, string | number> = {
    protocol: p.protocol,
    sourceIP: formatIP(p.src),
    sourcePort: p.sport,
    destIP: formatIP(p.dst),
    destPort: p.dport,
  };
  if (p.iif !== undefined) out.iif = p.iif;
  if (p.fromNode) out.fromNode = 'true';
  if (p.affinity) out.affinity = hostPort(p.affinity.ip, p.affinity.port);
  return out;
}
