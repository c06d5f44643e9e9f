import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import { sortedOrder } from '../../src/nft/sort-names.js';

/** What sortedOrder must give: a stable sort of the indices by name. */
const expected = (names: string[]) => names.map((_, i) => i).sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : a - b));

describe('sortedOrder', () => {
  it('orders as the default sort, equal names by index', () => {
    const unit = fc.constantFrom('a', 'b', '-', '/', '0', 'Z', '\u0000', '\u00fe');
    fc.assert(
      fc.property(fc.array(fc.string({ unit, maxLength: 14 }), { maxLength: 300 }), (names) => {
        expect([...sortedOrder(names)]).toEqual(expected(names));
      }),
      fcParams(300),
    );
  });

  it('orders any UTF-16 text as the default sort does', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 10 }), { maxLength: 100 }), (names) => {
        expect([...sortedOrder(names)]).toEqual(expected(names));
      }),
      fcParams(200),
    );
  });

  it('orders many names with long shared prefixes and duplicates', () => {
    const names: string[] = [];
    let x = 7;
    const rnd = () => (x = (x * 1103515245 + 12345) & 0x7fffffff);
    for (let i = 0; i < 30000; i++) {
      let s = ['endpoint-', 'service-', 'external-', 'endpoint-AAAA', '', 'endpoint-AAAABBBBCCCC'][rnd() % 6];
      for (let k = rnd() % 14; k > 0; k--) s += 'AB27/-.'[rnd() % 7];
      names.push(s);
      if (rnd() % 10 === 0) names.push(s);
    }
    expect([...sortedOrder(names)]).toEqual(expected(names));
  });
});
