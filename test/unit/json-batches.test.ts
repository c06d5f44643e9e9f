// Reading a listing in batches gives exactly what the splitter gives, and steps aside
// (null) where it cannot cut safely, leaving the splitter to report with positions.
import { describe, expect, it } from 'vitest';
import { itemBatches } from '../../src/nft/json-batches.js';
import { splitItems } from '../../src/nft/json-items.js';

const item = (i: number) =>
  i % 3 === 0
    ? { chain: { family: 'ip', table: 'kube-proxy', name: `c${i}`, handle: i } }
    : { rule: { family: 'ip', table: 'kube-proxy', chain: `c${i}`, handle: i, comment: `x}, {"rule": {"family": "y ${i}`, expr: [{ match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } }, { jump: { target: 'x' } }] } };

/** As nft prints it: one line, ", " between entries and ": " after keys. */
function nftText(items: unknown[]): string {
  return JSON.stringify({ nftables: items }).replace(/","|",\{|\},\{|\],"|,"|":/g, (m) => m.replace(',', ', ').replace(':', ': '));
}

function viaSplitter(text: string): unknown[] {
  return [...splitItems([text])].map((i) => JSON.parse(i.text));
}

function viaBatches(text: string): unknown[] | null {
  const out: unknown[] = [];
  for (const b of itemBatches(text)) {
    if (!b) return null;
    out.push(...b);
  }
  return out;
}

describe('listing batches', () => {
  it('give the same items as the splitter, cut in many batches', () => {
    const items = Array.from({ length: 30000 }, (_, i) => item(i));
    const text = nftText([{ metainfo: { version: '1.0.6', json_schema_version: 1 } }, ...items]);
    expect(text.length).toBeGreaterThan(3 << 20);
    let batches = 0;
    for (const b of itemBatches(text)) {
      expect(b).not.toBeNull();
      batches++;
    }
    expect(batches).toBeGreaterThan(2);
    expect(viaBatches(text)).toEqual(viaSplitter(text));
  });

  it('step aside for what is not plain nft output', () => {
    expect(viaBatches('{"nftables": {}}')).toBeNull();
    expect(viaBatches('[1, 2]')).toBeNull();
    expect(viaBatches('{"nftables": [{"metainfo": {}}, {"rule": ]}')).toBeNull();
    // Large and without nft's spacing: no safe place to cut.
    const compact = JSON.stringify({ nftables: Array.from({ length: 30000 }, (_, i) => item(i)) });
    expect(viaBatches(compact)).toBeNull();
    // Small: one batch, whatever the spacing.
    expect(viaBatches('{"nftables":[{"metainfo":{}},{"table":{"family":"ip","name":"t","handle":1}}]}')).toEqual([
      { metainfo: {} },
      { table: { family: 'ip', name: 't', handle: 1 } },
    ]);
  });
});
