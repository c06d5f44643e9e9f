// IP addresses and CIDRs as parsed values. Everything kproxc prints comes from these values,
// never from the input text, so an address can never carry nft or OpenFlow syntax.

export type IPFamily = 4 | 6;

export interface IP {
  readonly family: IPFamily;
  readonly bytes: Uint8Array; // 4 or 16 bytes, network order
}

export interface CIDR {
  readonly addr: IP; // network address, host bits cleared
  readonly prefix: number;
}

// Addresses and networks are made by these classes, not as object literals. Literals with
// the same number of properties share the engine's hidden classes by property name, so a
// literal elsewhere whose first property is also `family` (the writer's table reference,
// with a string there) widened that field for every address, and the compiled code of
// every function that reads addresses was thrown away, to be compiled again if used.
class Address implements IP {
  constructor(
    readonly family: IPFamily,
    readonly bytes: Uint8Array,
  ) {}
}

class Network implements CIDR {
  constructor(
    readonly addr: IP,
    readonly prefix: number,
  ) {}
}

/** An address of `family` with these bytes (4 or 16, network order; not copied). */
export function ipFromBytes(family: IPFamily, bytes: Uint8Array): IP {
  return new Address(family, bytes);
}

/** The network `addr`/`prefix`; `addr` must have its host bits cleared. */
export function cidrOf(addr: IP, prefix: number): CIDR {
  return new Network(addr, prefix);
}

/** How many bits an address of the family has: 32 or 128. */
export function addressBits(family: IPFamily): number {
  return family === 4 ? 32 : 128;
}

/** The network of the one address (/32 or /128). */
export function hostCIDR(ip: IP): CIDR {
  return new Network(ip, addressBits(ip.family));
}

// A large snapshot holds a hundred thousand addresses and more, and they live to the end:
// their bytes are views into shared blocks, not an ArrayBuffer each (a typed array with
// a buffer of its own costs twice the memory, all of it copied by every scavenge).
// The first blocks are small and each is twice the one before, up to BLOCK_BYTES: a new
// block is then made a few times while the functions that parse addresses are still
// watched by the engine. A path it has never seen taken is compiled as a bailout, and the
// first block to run out sent every one of those functions back to be compiled again.
const BLOCK_BYTES = 16384;
let block = new ArrayBuffer(64);
let blockUsed = 0;

/** Room for an address's bytes (zeroed). */
function addressBytes(n: 4 | 16): Uint8Array {
  if (blockUsed + n > block.byteLength) {
    block = new ArrayBuffer(Math.min(2 * block.byteLength, BLOCK_BYTES));
    blockUsed = 0;
  }
  const bytes = new Uint8Array(block, blockUsed, n);
  blockUsed += n;
  return bytes;
}

/**
 * Four decimal parts of 0-255 joined by dots, without leading zeros ("010" is ambiguous:
 * octal to some readers). Read character by character: there are hundreds of thousands
 * of addresses in a large snapshot.
 */
function parseIPv4(s: string): Uint8Array | null {
  // The parts as one number, so that nothing is allocated for text that is not an address.
  let value = 0;
  let part = 0;
  let n = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 0x2e;
    if (c === 0x2e) {
      if (digits === 0 || part > 3) return null;
      value = value * 256 + n;
      part++;
      n = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && n === 0) return null; // a leading zero
      n = n * 10 + (c - 0x30);
      if (++digits > 3 || n > 255) return null;
    } else return null;
  }
  if (part !== 4) return null;
  const out = addressBytes(4);
  out[0] = value >>> 24;
  out[1] = (value >>> 16) & 0xff;
  out[2] = (value >>> 8) & 0xff;
  out[3] = value & 0xff;
  return out;
}

function parseIPv6(s: string): Uint8Array | null {
  if (s.length < 2 || s.length > 45) return null;
  let head = s;
  let tail4: Uint8Array | null = null;
  const lastColon = s.lastIndexOf(':');
  if (s.indexOf('.', lastColon) !== -1) {
    tail4 = parseIPv4(s.slice(lastColon + 1));
    if (!tail4) return null;
    head = s.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = head.indexOf('::');
  if (dbl !== -1 && head.indexOf('::', dbl + 1) !== -1) return null;
  const groupsOf = (part: string): number[] | null => {
    if (part === '') return [];
    const gs = part.split(':');
    const out: number[] = [];
    for (const g of gs) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  let groups: number[];
  if (dbl !== -1) {
    const left = groupsOf(head.slice(0, dbl));
    const right = groupsOf(head.slice(dbl + 2));
    if (!left || !right || left.length + right.length > 7) return null;
    groups = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  } else {
    const all = groupsOf(head);
    if (!all || all.length !== 8) return null;
    groups = all;
  }
  const out = addressBytes(16);
  for (let i = 0; i < 8; i++) {
    out[2 * i] = groups[i] >> 8;
    out[2 * i + 1] = groups[i] & 0xff;
  }
  if (tail4) out.set(tail4, 12);
  return out;
}

/** Parses an IPv4 or IPv6 address; null when the text is not one. */
export function parseIP(s: string): IP | null {
  if (typeof s !== 'string') return null;
  // IPv4 first: most addresses are, and its reader stops at the first ":" of one that is not.
  const b4 = parseIPv4(s);
  if (b4) return new Address(4, b4);
  if (!s.includes(':')) return null;
  const b = parseIPv6(s);
  return b ? new Address(6, b) : null;
}

/**
 * An address as kube-proxy reads it (k8s.io/utils/net ParseIPSloppy): as parseIP, and also
 * an IPv4 address whose parts have leading zeros, each read as decimal ("010.1.1.1" is
 * 10.1.1.1), which older API servers stored and kube-proxy still programs.
 */
export function parseIPSloppy(s: string): IP | null {
  const ip = parseIP(s);
  if (ip || typeof s !== 'string' || !/^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/.test(s)) return ip;
  const parts = s.split('.').map((p) => Number.parseInt(p, 10));
  if (parts.some((n) => n > 255)) return null;
  return new Address(4, Uint8Array.from(parts));
}

/** Canonical text: dotted quad, or RFC 5952 (lower case, longest zero run compressed). */
export function formatIP(ip: IP): string {
  const b = ip.bytes;
  if (ip.family === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((b[2 * i] << 8) | b[2 * i + 1]);
  let bestStart = -1;
  let bestLen = 1; // RFC 5952: a single zero group is not compressed
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (bestStart === -1) return hex(g);
  return `${hex(g.slice(0, bestStart))}::${hex(g.slice(bestStart + bestLen))}`;
}

export function isIPv4Mapped(ip: IP): boolean {
  if (ip.family !== 6) return false;
  for (let i = 0; i < 10; i++) if (ip.bytes[i] !== 0) return false;
  return ip.bytes[10] === 0xff && ip.bytes[11] === 0xff;
}

export function isLoopback(ip: IP): boolean {
  if (ip.family === 4) return ip.bytes[0] === 127;
  for (let i = 0; i < 15; i++) if (ip.bytes[i] !== 0) return false;
  return ip.bytes[15] === 1;
}

export function compareIP(a: IP, b: IP): number {
  if (a.family !== b.family) return a.family - b.family;
  for (let i = 0; i < a.bytes.length; i++) {
    if (a.bytes[i] !== b.bytes[i]) return a.bytes[i] - b.bytes[i];
  }
  return 0;
}

export function ipEquals(a: IP, b: IP): boolean {
  return compareIP(a, b) === 0;
}

function mask(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < out.length; i++) {
    const bits = Math.max(0, Math.min(8, prefix - 8 * i));
    out[i] &= bits === 0 ? 0 : (0xff << (8 - bits)) & 0xff;
  }
  return out;
}

export interface ParsedCIDR {
  cidr: CIDR;
  hostBitsSet: boolean; // the text named an address inside the network, not the network itself
}

/** Parses "addr/len"; the result's address is the network (host bits cleared). */
export function parseCIDR(s: string, sloppy = false): ParsedCIDR | null {
  if (typeof s !== 'string') return null;
  const slash = s.indexOf('/');
  if (slash === -1) return null;
  const ip = sloppy ? parseIPSloppy(s.slice(0, slash)) : parseIP(s.slice(0, slash));
  const lenText = s.slice(slash + 1);
  if (!ip || !/^(0|[1-9][0-9]{0,2})$/.test(lenText)) return null;
  const prefix = Number(lenText);
  if (prefix > addressBits(ip.family)) return null;
  const net = mask(ip.bytes, prefix);
  const addr = new Address(ip.family, net);
  return { cidr: new Network(addr, prefix), hostBitsSet: compareIP(ip, addr) !== 0 };
}

export function formatCIDR(c: CIDR): string {
  return `${formatIP(c.addr)}/${c.prefix}`;
}

export function cidrContains(c: CIDR, ip: IP): boolean {
  if (c.addr.family !== ip.family) return false;
  return compareIP(c.addr, new Address(ip.family, mask(ip.bytes, c.prefix))) === 0;
}

export function isZeroCIDR(c: CIDR): boolean {
  return c.prefix === 0;
}

export function compareCIDR(a: CIDR, b: CIDR): number {
  return compareIP(a.addr, b.addr) || a.prefix - b.prefix;
}

const HEX_BYTE = Array.from({ length: 256 }, (_, x) => x.toString(16).padStart(2, '0'));

/** Hex of an IPv4 address as OpenFlow registers print it: 0x0af00001. */
export function ipv4Hex(ip: IP): string {
  let out = '0x';
  for (const x of ip.bytes) out += HEX_BYTE[x];
  return out;
}
