// Utf8Out prints what String() and formatIP print, as UTF-8, whatever room is left.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIP, type IP } from '../../src/net/ip.js';
import { Utf8Out } from '../../src/nft/utf8-out.js';

/** Prints into a small buffer that grows, so that room() is asked for often. */
class Out extends Utf8Out {
  constructor() {
    super();
    this.buf = Buffer.alloc(4);
  }
  protected room(n: number): void {
    const b = Buffer.alloc(this.at + n + 3);
    this.buf.copy(b, 0, 0, this.at);
    this.buf = b;
  }
  text(): string {
    return this.buf.toString('utf8', 0, this.at);
  }
}

describe('Utf8Out', () => {
  it('prints numbers as String() does', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.double(), fc.integer())), (ns) => {
        const o = new Out();
        for (const n of ns) {
          o.num(n);
          o.str(' ');
        }
        expect(o.text()).toBe(ns.map((n) => `${String(n)} `).join(''));
      }),
    );
  });

  it('prints addresses as formatIP does', () => {
    const ip = fc.oneof(
      fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes): IP => ({ family: 4, bytes })),
      fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes): IP => ({ family: 6, bytes })),
    );
    fc.assert(
      fc.property(fc.array(ip), (ips) => {
        const o = new Out();
        for (const a of ips) o.ip(a);
        expect(o.text()).toBe(ips.map(formatIP).join(''));
      }),
    );
  });

  it('prints any text as UTF-8', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 40 })), (ss) => {
        const o = new Out();
        for (const s of ss) o.str(s);
        expect(o.text()).toBe(ss.join(''));
      }),
    );
  });
});
