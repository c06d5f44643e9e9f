import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NameIndex, nameHash } from '../../src/nft/name-index.js';

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
      { numRuns: 200 },
    );
  });

  it('keeps names apart that start at the same slot', () => {
    // Names whose hashes agree in their low bits, so they start at one slot and are told
    // apart only by comparing the names.
    const byHash = new Map<number, string[]>();
    for (let a = 0; a < 2000; a++) {
      for (let b = 0; b < 64; b++) {
        const n = String.fromCharCode(a, 0x30 + b);
        const h = nameHash(n) & 0xfff;
        byHash.set(h, [...(byHash.get(h) ?? []), n]);
      }
    }
    const same = [...byHash.values()].find((ns) => ns.length > 8)!;
    const index = new NameIndex();
    same.forEach((n, i) => expect(index.add(n)).toBe(i));
    same.forEach((n, i) => expect(index.get(n)).toBe(i));
    expect(index.get(`${same[0]}x`)).toBe(-1);
  });

  it('holds a hundred thousand names across its growth', () => {
    const index = new NameIndex();
    const names = Array.from({ length: 100_000 }, (_, i) => `endpoint-${i.toString(36)}-ns/svc/tcp/http__10.0.${i >> 8}.${i & 255}/80`);
    names.forEach((n, i) => expect(index.add(n)).toBe(i));
    expect(index.size).toBe(names.length);
    for (let i = 0; i < names.length; i += 997) expect(index.get(names[i])).toBe(i);
    expect(index.get('endpoint-none')).toBe(-1);
  });
});
