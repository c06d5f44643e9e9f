// A set's elements read straight from the listing text (src/live/compact/elements.ts) must be
// what reading them as JSON (live/checked/json.ts readElement) gives: the same keys and values, in
// the same order (compareKeys), or nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import { elementJson } from '../../src/nft/json.js';
import { readElement } from '../../src/live/checked/json.js';
import { readElements } from '../../src/live/compact/elements.js';
import { elementValueKey } from '../../src/live/view.js';
import type { DataType, Element, KeyPart, NftSet } from '../../src/nft/objects.js';
import { compareKeys, keyString } from '../../src/nft/ruleset.js';
import { nameArb, nftSpaced } from '../helpers/stmts.js';

const partArb = (t: DataType): fc.Arbitrary<KeyPart> => {
  switch (t) {
    case 'ipv4_addr':
      return fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes) => ({ t: 'ip', ip: { family: 4, bytes } }));
    case 'ipv6_addr':
      return fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })), { minLength: 16, maxLength: 16 }).map((b) => ({ t: 'ip', ip: { family: 6, bytes: Uint8Array.from(b) } }));
    case 'inet_proto':
      return fc.constantFrom('tcp', 'udp', 'sctp').map((name) => ({ t: 'proto', name: name as 'tcp' }));
    case 'inet_service':
      return fc.integer({ min: 0, max: 65535 }).map((n) => ({ t: 'port', n }));
    case 'integer':
      throw new Error('members of a set keyed by integers are never read');
  }
};

const setArb: fc.Arbitrary<{ set: NftSet; elements: Element[] }> = fc
  .tuple(
    fc.constantFrom<DataType[]>(
      ['ipv4_addr'],
      ['ipv6_addr'],
      ['ipv4_addr', 'inet_proto', 'inet_service'],
      ['inet_proto', 'inet_service'],
      ['ipv6_addr', 'inet_proto', 'inet_service'],
      // kube-proxy's hairpin-connections set: source . destination . protocol . port.
      ['ipv4_addr', 'ipv4_addr', 'inet_proto', 'inet_service'],
      ['ipv6_addr', 'ipv6_addr', 'inet_proto', 'inet_service'],
    ),
    fc.boolean(),
  )
  .chain(([keyType, map]) => {
    const set: NftSet = { name: 's', kind: map ? 'map' : 'set', keyType };
    const elementArb = fc.record({
      key: fc.tuple(...keyType.map(partArb)),
      comment: fc.option(fc.stringMatching(/^[a-z0-9/:.-]{1,12}$/), { nil: undefined }),
      target: nameArb,
      kind: fc.constantFrom('goto', 'jump', 'drop'),
    });
    return fc.uniqueArray(elementArb, { minLength: 1, maxLength: 12, selector: (e) => keyString(e.key) }).map((es) => ({
      set,
      elements: es.map((e): Element => {
        const el: Element = { set: 's', key: e.key };
        if (map) el.value = e.kind === 'drop' ? { kind: 'drop' } : { kind: e.kind as 'goto', target: e.target };
        if (e.comment !== undefined) el.comment = e.comment;
        return el;
      }),
    }));
  });

/** What the long way reads from the elem array: keys and values, sorted by compareKeys. */
function slow(elemText: string, set: NftSet): { keys: string[]; values: string[] } | null {
  try {
    const els = (JSON.parse(elemText) as never[]).map((j, i) => readElement(j, set, `elem[${i}]`)).sort((a, b) => compareKeys(a.key, b.key));
    return { keys: els.map((e) => keyString(e.key)), values: els.map(elementValueKey) };
  } catch {
    return null;
  }
}

function fast(elemText: string, set: NftSet) {
  return readElements(`${elemText}]}}`, 1, elemText.length - 1, set);
}

describe('elements read straight from the listing text', () => {
  it('random sets and maps as nft lists them read as the long way reads them', () => {
    fc.assert(
      fc.property(setArb, fc.boolean(), ({ set, elements }, shuffle) => {
        const listed = elements.map((e) => elementJson(e, true));
        if (shuffle) listed.reverse();
        const text = nftSpaced(listed);
        const got = fast(text, set);
        expect(got).not.toBeNull();
        expect(got).toEqual(slow(text, set));
      }),
      fcParams(1500),
    );
  });

  it('leaves to the long way what is not exactly nft\'s spelling of what kproxc writes', () => {
    const v4: NftSet = { name: 's', kind: 'set', keyType: ['ipv4_addr'] };
    const v6: NftSet = { name: 's', kind: 'set', keyType: ['ipv6_addr'] };
    const map: NftSet = { name: 'm', kind: 'map', keyType: ['inet_proto', 'inet_service'] };
    for (const [text, set] of [
      ['["010.0.0.1"]', v4],
      ['["fd00::1"]', v4],
      ['["10.0.0.1"]', v6],
      ['["fd00:0::1"]', v6],
      ['[{"range": ["10.0.0.1", "10.0.0.9"]}]', v4],
      ['[{"elem": {"val": "10.0.0.1"}}]', v4],
      ['[{"elem": {"val": "10.0.0.1", "comment": "a\\"b"}}]', v4],
      ['[{"elem": {"val": "10.0.0.1", "expires": 5}}]', v4],
      ['[[{"concat": ["tcp", 65536]}, {"drop": null}]]', map],
      ['[[{"concat": ["tcp", 80]}, {"goto": {"target": "a b"}}]]', map],
      ['[[{"concat": ["tcp", 80]}, {"continue": null}]]', map],
      ['[{"concat": ["tcp", 80]}]', map],
      ['["10.0.0.1","10.0.0.2"]', v4],
    ] as [string, NftSet][]) {
      expect(fast(text, set), text).toBeNull();
    }
  });
});
