// Sets are sorted by elementSortKey with the default sort: the order must be compareKeys'
// order, and two keys must be equal exactly when their printed forms are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import type { IP } from '../../src/net/ip.js';
import type { KeyPart } from '../../src/nft/objects.js';
import { compareKeys, elementSortKey, keyString, statementsBuilder } from '../../src/nft/ruleset.js';
import { concat, payload } from '../../src/nft/expr.js';
import { printed } from '../../src/nft/expr-text.js';
import { writeElementBlock, writeRangeBlock } from '../../src/nft/text.js';

const ip4 = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes): IP => ({ family: 4, bytes }));
const ip6 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes): IP => ({ family: 6, bytes }));
const part: fc.Arbitrary<KeyPart> = fc.oneof(
  fc.oneof(ip4, ip6).map((ip): KeyPart => ({ t: 'ip', ip })),
  fc.constantFrom('tcp', 'udp', 'sctp').map((name): KeyPart => ({ t: 'proto', name: name as 'tcp' })),
  fc.oneof(fc.integer({ min: 0, max: 65535 }), fc.constantFrom(0, 1, 255, 256, 65535)).map((n): KeyPart => ({ t: 'port', n })),
);
const key = fc.array(part, { minLength: 1, maxLength: 3 });
// Integers (live members of a set keyed by `numgen` constants) print as ports do: only ordered with the rest.
const intPart = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 255, 256, 65536, 0x7fffffff, 0xffffffff)).map((n): KeyPart => ({ t: 'int', n }));
const orderedKey = fc.array(fc.oneof(part, intPart), { minLength: 1, maxLength: 3 });

describe('elementSortKey', () => {
  it('orders keys as compareKeys does', () => {
    fc.assert(
      fc.property(orderedKey, orderedKey, (a, b) => {
        const byKey = elementSortKey(a) < elementSortKey(b) ? -1 : elementSortKey(a) > elementSortKey(b) ? 1 : 0;
        expect(byKey).toBe(Math.sign(compareKeys(a, b)));
      }),
      fcParams(3000),
    );
  });

  it('is equal exactly for keys that print the same', () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(elementSortKey(a) === elementSortKey(b)).toBe(keyString(a) === keyString(b));
      }),
      fcParams(3000),
    );
  });

  it('keeps a port out of range apart from every valid one', () => {
    const bad = elementSortKey([{ t: 'port', n: 80.5 }]);
    expect(bad).not.toBe(elementSortKey([{ t: 'port', n: 80 }]));
    expect(elementSortKey([{ t: 'port', n: 65536 }])).not.toBe(elementSortKey([{ t: 'port', n: 0 }]));
  });
});

describe('key ranges of a data map (TableBuilder.elementRange)', () => {
  const builder = () => {
    const b = statementsBuilder({ family: 'ip', name: 't' });
    const typeOf = concat(payload('ip', 'daddr'), payload('tcp', 'dport'));
    b.set({ name: 'm', kind: 'map', keyType: ['integer'], typeof: { t: 'numgen', mod: 1 }, data: { types: ['ipv4_addr', 'inet_service'], typeof: typeOf } });
    return b;
  };
  const datum = (i: number): KeyPart[] => [
    { t: 'ip', ip: { family: 4, bytes: Uint8Array.of(10, 0, i >> 8, i & 255) } },
    { t: 'port', n: 1000 + i },
  ];
  const mapOf = (b: ReturnType<typeof builder>) => b.finish().sets.find((s) => s.set.name === 'm')!;
  const elementsOf = (b: ReturnType<typeof builder>) => mapOf(b).elements;
  // Ranges apart: each a length and a gap before it, from a random start.
  const rangesArb = fc.record({
    start: fc.integer({ min: 0, max: 0xffff0000 }),
    parts: fc.array(fc.record({ gap: fc.integer({ min: 0, max: 70_000 }), n: fc.integer({ min: 1, max: 12 }) }), { maxLength: 8 }),
  });

  it('gives the elements one by one would give, in key order, whatever the order of the ranges', () => {
    fc.assert(
      fc.property(rangesArb, fc.func(fc.integer()), ({ start, parts }, order) => {
        let at = start;
        const ranges = parts.map(({ gap, n }) => {
          const base = at + gap;
          at = base + n;
          return { base, data: Array.from({ length: n }, (_, i) => datum(base + i)) };
        });
        fc.pre(at <= 0xffffffff);
        const shuffled = [...ranges].sort((x, y) => order(x.base) - order(y.base) || x.base - y.base);
        const byRange = builder();
        for (const r of shuffled) byRange.elementRange('m', r.base, r.data);
        const oneByOne = builder();
        for (const r of shuffled) r.data.forEach((d, i) => oneByOne.element({ set: 'm', key: [{ t: 'int', n: r.base + i }], data: d }));
        const ranged = mapOf(byRange);
        const single = elementsOf(oneByOne);
        expect(ranged.elements).toEqual(single);
        if (ranges.length === 0) return;
        // The text writer prints the ranges as it would print the elements.
        const text = printed((o) => writeRangeBlock(o, 'ip t', ranged.set, ranged.keyRanges!));
        expect(text).toBe(printed((o) => writeElementBlock(o, 'ip t', ranged.set, single)));
      }),
      fcParams(500),
    );
  });

  it('refuses ranges that overlap, ranges beside single elements, and sets not keyed by one integer', () => {
    const overlap = builder();
    overlap.elementRange('m', 100, [datum(1), datum(2)]);
    overlap.elementRange('m', 101, [datum(3)]);
    expect(() => overlap.finish()).toThrow(/overlap at 101/);
    const mixed = builder();
    mixed.elementRange('m', 100, [datum(1)]);
    mixed.element({ set: 'm', key: [{ t: 'int', n: 7 }], data: datum(2) });
    expect(() => mixed.finish()).toThrow(/key ranges and single elements/);
    const b = builder();
    b.set({ name: 's', kind: 'set', keyType: ['integer'] });
    expect(() => b.elementRange('s', 0, [datum(1)])).toThrow(/not a data map/);
    expect(() => builder().elementRange('m', 0xffffffff, [datum(1), datum(2)])).toThrow(/out of 32 bits/);
  });
});
