// Address sets as merged intervals. nft merges the items of an anonymous set of addresses
// when it loads them: `{ 10.0.0.0/24, 10.0.1.0/24 }` lists as `{ 10.0.0.0/23 }`,
// `{ 9.0.0.0/8, 10.0.0.0/8 }` as the range `9.0.0.0-10.255.255.255`, and an address inside
// a prefix disappears (nft 1.0.6: the ranges-merged diff case, captured from real nft, and
// test/backends/nftables/nft-load.system.test.ts). Two address
// matches are the same match exactly when their merged intervals are the same.
import { addressBits, cidrOf, formatIP, ipFromBytes, type CIDR, type IP, type IPFamily } from '../net/ip.js';

export interface Interval {
  lo: bigint;
  hi: bigint; // inclusive
}

export function ipToBig(ip: IP): bigint {
  let n = 0n;
  for (const b of ip.bytes) n = (n << 8n) | BigInt(b);
  return n;
}

export function bigToIP(n: bigint, family: IPFamily): IP {
  const bytes = new Uint8Array(family === 4 ? 4 : 16);
  for (let i = bytes.length - 1; i >= 0; i--) {
    bytes[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return ipFromBytes(family, bytes);
}

export function cidrInterval(c: CIDR): Interval {
  const hostBits = BigInt(addressBits(c.addr.family) - c.prefix);
  const size = 1n << hostBits;
  const lo = ipToBig(c.addr) & ~(size - 1n); // host bits cleared, as nft does on load
  return { lo, hi: lo + size - 1n };
}

/** Sorted, with overlapping and adjacent intervals joined. */
export function mergeIntervals(items: Interval[]): Interval[] {
  const sorted = [...items].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  const out: Interval[] = [];
  for (const it of sorted) {
    const last = out[out.length - 1];
    if (last && it.lo <= last.hi + 1n) {
      if (it.hi > last.hi) last.hi = it.hi;
    } else {
      out.push({ ...it });
    }
  }
  return out;
}

/** The fewest CIDRs that cover exactly [lo, hi], in address order. */
export function rangeToCIDRs(lo: IP, hi: IP): CIDR[] {
  const family = lo.family;
  const bits = addressBits(family);
  let a = ipToBig(lo);
  const b = ipToBig(hi);
  const out: CIDR[] = [];
  while (a <= b) {
    // The largest block that starts at a (aligned) and does not pass b.
    let size = 0;
    while (size < bits && (a & ((1n << BigInt(size + 1)) - 1n)) === 0n && a + (1n << BigInt(size + 1)) - 1n <= b) size++;
    out.push(cidrOf(bigToIP(a, family), bits - size));
    a += 1n << BigInt(size);
  }
  return out;
}

/** Intervals in a printable, comparable form: "lo-hi" with both ends as addresses. */
export function intervalsText(items: Interval[], family: IPFamily): string[] {
  return items.map((i) => `${formatIP(bigToIP(i.lo, family))}-${formatIP(bigToIP(i.hi, family))}`);
}
