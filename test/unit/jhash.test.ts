// The model of the kernel's nftables `jhash` (src/nft/jhash.ts). Its values for endpoints
// are proven against the real kernel in test/backends/nftables/jhash.system.test.ts; here,
// the values measured there, and the tail lengths no IPv4 endpoint key reaches.
import { describe, expect, it } from 'vitest';
import { InternalError } from '../../src/diag/diagnostic.js';
import { parseIP } from '../../src/net/ip.js';
import { endpointJhash, jhash } from '../../src/nft/jhash.js';

const U32 = 4294967295;

/**
 * include/linux/jhash.h's jhash() for keys of up to 12 bytes, transcribed statement by
 * statement (the switch and its fallthrough kept), to check the model's loop against.
 */
function kernelTail(k: Uint8Array, initval: number): number {
  const rol32 = (x: number, s: number) => ((x << s) | (x >>> (32 - s))) >>> 0;
  let a = (0xdeadbeef + k.length + initval) >>> 0;
  let b = a;
  let c = a;
  switch (k.length) {
    case 12: c += k[11] * 2 ** 24; // fallthrough
    case 11: c += k[10] << 16; // fallthrough
    case 10: c += k[9] << 8; // fallthrough
    case 9: c += k[8]; // fallthrough
    case 8: b += k[7] * 2 ** 24; // fallthrough
    case 7: b += k[6] << 16; // fallthrough
    case 6: b += k[5] << 8; // fallthrough
    case 5: b += k[4]; // fallthrough
    case 4: a += k[3] * 2 ** 24; // fallthrough
    case 3: a += k[2] << 16; // fallthrough
    case 2: a += k[1] << 8; // fallthrough
    case 1: {
      a += k[0];
      a >>>= 0; b >>>= 0; c >>>= 0;
      c ^= b; c = (c - rol32(b, 14)) >>> 0;
      a ^= c; a = (a - rol32(c, 11)) >>> 0;
      b ^= a; b = (b - rol32(a, 25)) >>> 0;
      c ^= b; c = (c - rol32(b, 16)) >>> 0;
      a ^= c; a = (a - rol32(c, 4)) >>> 0;
      b ^= a; b = (b - rol32(a, 14)) >>> 0;
      c ^= b; c = (c - rol32(b, 24)) >>> 0;
      break;
    }
    case 0:
      break;
  }
  return c >>> 0;
}

/** Deterministic bytes (xorshift32), so that a failure can be rerun. */
function bytes(n: number, state: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

describe('jhash', () => {
  it.each([
    ['127.0.0.5', 8080, 3557167367],
    ['10.1.2.3', 65535, 961112963],
    ['10.9.0.7', 9999, 3434796301],
  ])('%s:%i hashes as the kernel measured (seed 0, mod 4294967295)', (addr, port, want) => {
    expect(endpointJhash(parseIP(addr)!, port, U32, 0)).toBe(want);
  });

  it('returns the initial c for an empty key, without the final mix', () => {
    expect(jhash(new Uint8Array(0), 0)).toBe(0xdeadbeef);
    expect(jhash(new Uint8Array(0), 0xdeadbeef)).toBe(0xbd5b7dde); // lookup3's own test value
    expect(jhash(new Uint8Array(0), 7)).toBe(0xdeadbeef + 7);
  });

  it('hashes every tail length 0..12 differently, each as the kernel switch does', () => {
    const key = Uint8Array.from([0x81, 0x02, 0xf3, 0x04, 0x05, 0xe6, 0x07, 0x08, 0xc9, 0x0a, 0x0b, 0xfc]);
    const values = new Set<number>();
    for (let n = 0; n <= 12; n++) {
      const h = jhash(key.subarray(0, n), 0);
      expect(h, `length ${n}`).toBe(kernelTail(key.subarray(0, n), 0));
      expect(Number.isInteger(h) && h >= 0 && h <= U32).toBe(true);
      values.add(h);
    }
    expect(values.size).toBe(13);
    // Zero bytes still count: the length is part of the initial value.
    expect(new Set([0, 1, 2, 8, 12].map((n) => jhash(new Uint8Array(n), 0))).size).toBe(5);
  });

  it('agrees with the transcribed switch on many keys and seeds', () => {
    for (let i = 1; i <= 500; i++) {
      const seed = (i * 0x9e3779b9) >>> 0;
      const k = bytes(i % 13, i);
      expect(jhash(k, seed), `key ${[...k]} seed ${seed}`).toBe(kernelTail(k, seed));
    }
  });

  it('scales by mod as reciprocal_scale: (hash x mod) >> 32', () => {
    const ip = parseIP('10.9.0.7')!;
    const key = Uint8Array.from([10, 9, 0, 7, 0x27, 0x0f, 0, 0]);
    const h = BigInt(jhash(key, 0));
    for (const mod of [1, 2, 3, 1000, 2147483647, U32]) {
      expect(endpointJhash(ip, 9999, mod, 0)).toBe(Number((h * BigInt(mod)) >> 32n));
    }
    expect(endpointJhash(ip, 9999, 1, 0)).toBe(0);
    expect(endpointJhash(ip, 9999, U32, 0)).toBe(3434796301);
  });

  it('refuses keys longer than 12 bytes and IPv6 endpoints', () => {
    expect(() => jhash(new Uint8Array(13), 0)).toThrow(InternalError);
    expect(() => jhash(new Uint8Array(20), 0)).toThrow(/byte order/);
    expect(() => endpointJhash(parseIP('fd00::1')!, 80, U32, 0)).toThrow(InternalError);
  });
});
