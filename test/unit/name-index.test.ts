import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams, fcSize } from '../helpers/fc-runs.js';
import { firstSlot, NameIndex, nameHash } from '../../src/nft/name-index.js';

describe('NameIndex', () => {
  it('numbers names in the order added, as a Map from name to its first number would', () => {
    // Few distinct characters and short names: many repeats and equal hashes' neighbours.
    const name = fc.string({ unit: fc.constantFrom('a', 'b', '-', '/', 'é'), maxLength: 6 });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), name), { maxLength: 3000 }), (ops) => {
        const index = new NameIndex();
        const reference = new Map<string, number>();
        for (const [add, n] of ops) {
          if (add) {
            if (!reference.has(n)) reference.set(n, reference.size);
            expect(index.add(n)).toBe(reference.get(n));
          } else {
            expect(index.get(n)).toBe(reference.get(n) ?? -1);
            expect(index.has(n)).toBe(reference.has(n));
          }
          expect(index.size).toBe(reference.size);
        }
        for (const [n, k] of reference) expect(index.get(n)).toBe(k);
      }),
      fcParams(200),
    );
  });

  it('keeps names apart that start at the same slot', () => {
    // Names that start at one slot of a new index (1,024 slots), found by trying: they are
    // told apart by probing on and comparing hashes, and names with equal hashes by name.
    const byHash = new Map<number, string[]>();
    for (let a = 0; a < 2000; a++) {
      for (let b = 0; b < 64; b++) {
        const n = String.fromCharCode(a, 0x30 + b);
        const h = firstSlot(nameHash(n), 10);
        byHash.set(h, [...(byHash.get(h) ?? []), n]);
      }
    }
    const same = [...byHash.values()].find((ns) => ns.length > 8)!;
    const index = new NameIndex();
    same.forEach((n, i) => expect(index.add(n)).toBe(i));
    same.forEach((n, i) => expect(index.get(n)).toBe(i));
    expect(index.get(`${same[0]}x`)).toBe(-1);
  });

  it('spreads names that differ only in the high bits of a character', () => {
    // FNV's low bits see only the characters' low bits: by them alone, these 1,000 names
    // would start at no more than 16 of 4,096 slots (their hashes agree in the low 8 bits).
    const high = (k: number) => String.fromCharCode(0x100 * (1 + k));
    const names = Array.from({ length: 1000 }, (_, i) => `chain-${high(i % 250)}${high(Math.floor(i / 250))}`);
    expect(new Set(names).size).toBe(1000);
    const slots = new Set(names.map((n) => firstSlot(nameHash(n), 12)));
    expect(new Set(names.map((n) => nameHash(n) & 0xfff)).size).toBeLessThanOrEqual(16);
    expect(slots.size).toBeGreaterThan(700);
  });

  it('holds a hundred thousand names across its growth (a tenth in a quick run)', () => {
    const index = new NameIndex();
    const names = Array.from({ length: fcSize(100_000, 10_000) }, (_, i) => `endpoint-${i.toString(36)}-ns/svc/tcp/http__10.0.${i >> 8}.${i & 255}/80`);
    names.forEach((n, i) => expect(index.add(n)).toBe(i));
    expect(index.size).toBe(names.length);
    for (let i = 0; i < names.length; i += 997) expect(index.get(names[i])).toBe(i);
    expect(index.get('endpoint-none')).toBe(-1);
  });
});
