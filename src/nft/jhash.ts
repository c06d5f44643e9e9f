// The kernel's nftables `jhash` expression, computed here so that the compiler can write the
// value a rule `jhash ip daddr . tcp dport mod M seed S` gives for an endpoint as a constant
// (fast-load's affinity records: docs/fast-load.md, "Session affinity recorded after NAT").
// Checked against the real kernel by test/backends/nftables/jhash.system.test.ts.
import { InternalError } from '../diag/diagnostic.js';
import type { IP } from '../net/ip.js';

// Linux include/linux/jhash.h: Bob Jenkins' lookup3 with its own initial value.
const JHASH_INITVAL = 0xdeadbeef;

const rol32 = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;

/**
 * Linux's `jhash(key, length, initval)`. Only keys of up to 12 bytes: the kernel reads each
 * full 12-byte block of a longer key as three words in the CPU's byte order
 * (`__get_unaligned_cpu32`), so their hash differs between little- and big-endian hosts,
 * while the tail (all of a key of 12 bytes or fewer) is read byte by byte and hashes the same
 * everywhere. No key kproxc hashes is longer.
 */
export function jhash(data: Uint8Array, seed: number): number {
  const n = data.length;
  if (n > 12) throw new InternalError(`jhash of ${n} bytes depends on the kernel's byte order; only keys of up to 12 bytes are modelled`);
  let a = (JHASH_INITVAL + n + seed) >>> 0;
  let b = a;
  let c = a;
  // The tail switch of jhash() with its fallthrough: byte i goes to word i/4 at bits 8*(i%4).
  // With nothing left (length 0) the kernel returns c as it is, without the final mix.
  if (n === 0) return c;
  for (let i = 0; i < n; i++) {
    const v = (data[i] << (8 * (i & 3))) >>> 0;
    if (i < 4) a = (a + v) >>> 0;
    else if (i < 8) b = (b + v) >>> 0;
    else c = (c + v) >>> 0;
  }
  // __jhash_final
  c ^= b; c = (c - rol32(b, 14)) >>> 0;
  a ^= c; a = (a - rol32(c, 11)) >>> 0;
  b ^= a; b = (b - rol32(a, 25)) >>> 0;
  c ^= b; c = (c - rol32(b, 16)) >>> 0;
  a ^= c; a = (a - rol32(c, 4)) >>> 0;
  b ^= a; b = (b - rol32(a, 14)) >>> 0;
  c ^= b; c = (c - rol32(b, 24)) >>> 0;
  return c;
}

/** The kernel's `reciprocal_scale(val, ep_ro)`: (val x ep_ro) >> 32, exact (the product needs 64 bits). */
function reciprocalScale(val: number, mod: number): number {
  return Number((BigInt(val >>> 0) * BigInt(mod >>> 0)) >> 32n);
}

/**
 * What `jhash ip daddr . tcp dport mod MOD seed SEED` yields for a packet to ip:port. The
 * kernel hashes the registers the concatenation was loaded into: each field takes whole
 * 32-bit registers, so the key is 8 bytes, the address in network order, the port
 * big-endian, then the two zero bytes that pad the port's register.
 */
export function endpointJhash(ip: IP, port: number, mod: number, seed: number): number {
  if (ip.family !== 4) throw new InternalError('endpointJhash models IPv4 keys only (an IPv6 key is 20 bytes, past what jhash() reads byte-wise)');
  const key = new Uint8Array(8);
  key.set(ip.bytes, 0);
  key[4] = (port >>> 8) & 0xff;
  key[5] = port & 0xff;
  return reciprocalScale(jhash(key, seed), mod);
}
