// Sets are sorted by elementSortKey with the default sort: the order must be compareKeys'
// order, and two keys must be equal exactly when their printed forms are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import type { IP } from '../../src/net/ip.js';
import type { KeyPart } from '../../src/nft/objects.js';
import { compareKeys, elementSortKey, keyString } from '../../src/nft/ruleset.js';

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
