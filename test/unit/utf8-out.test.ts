// Utf8Out prints what String() and formatIP print, as UTF-8, whatever room is left; a
// PieceStore knows which of its pieces are ASCII.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import { formatIP, type IP } from '../../src/net/ip.js';
import { PieceStore } from '../../src/nft/text-table.js';
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
      fcParams(100),
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
      fcParams(100),
    );
  });

  it('prints any text as UTF-8, encoded here or before', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 40 })), (ss) => {
        const o = new Out();
        // Each text as a string or, every other one, already encoded.
        ss.forEach((s, i) => (i % 2 ? o.utf8(Buffer.from(s), !/[^\x00-\x7f]/.test(s)) : o.str(s)));
        expect(o.text()).toBe(ss.join(''));
      }),
      fcParams(100),
    );
  });

  it('prints names as they are, short and long, among other text', () => {
    const name = fc.stringMatching(/^[A-Za-z_.][A-Za-z0-9_./-]{0,80}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.string({ unit: 'grapheme', maxLength: 8 }))), (pairs) => {
        const o = new Out();
        for (const [n, s] of pairs) {
          o.name(n);
          o.str(s);
        }
        expect(o.text()).toBe(pairs.map(([n, s]) => n + s).join(''));
      }),
      fcParams(100),
    );
  });
});

describe('PieceStore', () => {
  it('knows which pieces are ASCII, items cut across pieces or not', () => {
    // Pieces of 64 bytes: most items are cut over two, some are larger than a piece.
    const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 30 }), fc.constantFrom('é', 'x'.repeat(100)));
    fc.assert(
      fc.property(fc.array(fc.array(text, { maxLength: 4 }), { maxLength: 60 }), (items) => {
        const store = new PieceStore(64);
        for (const parts of items) {
          store.begin();
          // Text as a string, or already encoded (as templates' text is), in turn.
          parts.forEach((t, i) => (i % 2 ? store.utf8(Buffer.from(t), !/[^\x00-\x7f]/.test(t)) : store.str(t)));
          store.byte(0x0a);
          store.end();
        }
        const printed = store.items(items.map((_, k) => k));
        expect(printed.ascii.length).toBe(printed.pieces.length);
        printed.pieces.forEach((p, i) => expect(printed.ascii[i], JSON.stringify(p)).toBe(!/[\x80-\xff]/.test(p)));
        items.forEach((parts, k) => {
          const line = printed.pieces[printed.piece[k]].slice(printed.start[k], printed.end[k]);
          expect(Buffer.from(line, 'latin1').toString('utf8')).toBe(`${parts.join('')}\n`);
        });
      }),
      fcParams(300),
    );
  });
});
