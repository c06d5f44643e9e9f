import { describe, expect, it } from 'vitest';
import { OuterShapeError, splitItems } from '../../src/live/checked/split.js';

const items = (chunks: string[]) => [...splitItems(chunks)];

function chunked(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('splitItems', () => {
  const doc =
    '{"nftables": [{"metainfo": {"version": "1.0.6"}},\n {"rule": {"comment": "a \\"quoted\\" } ] {", "expr": [{"x": [1, {"y": null}]}]}}, {"table": {"name": "t\\\\"}}]}\n';

  it('yields each item of the nftables array, whatever the chunking', () => {
    const whole = items([doc]).map((i) => JSON.parse(i.text));
    expect(whole).toEqual(JSON.parse(doc).nftables);
    for (const size of [1, 2, 3, 5, 7, 16, 64]) {
      expect(items(chunked(doc, size)).map((i) => i.text)).toEqual(items([doc]).map((i) => i.text));
    }
  });

  it('gives the line and column where each item starts', () => {
    expect(items([doc]).map((i) => [i.line, i.col])).toEqual([
      [1, 15],
      [2, 2],
      [2, 82],
    ]);
  });

  it('reads the empty listing nft prints with spaces', () => {
    expect(items(['{"nftables": [{"metainfo": {"json_schema_version": 1}}]}'])).toHaveLength(1);
    expect(items(['{ "nftables" : [ ] }'])).toEqual([]);
  });

  const bad: [string, string][] = [
    ['', "the input ends early: expected '{'"],
    ['table ip kube-proxy {', "expected '{' (this looks like `nft list ruleset` text; use `nft -j list ruleset`)"],
    ['{"rules": []}', 'expected "nftables", found rules"'],
    ['{"nftables": {}}', "expected '['"],
    ['{"nftables": [1]}', "expected an object or ']'"],
    ['{"nftables": [{"a": {}} {"b": {}}]}', "expected ',' or ']'"],
    ['{"nftables": [{"a": {}},]}', 'expected an object'],
    ['{"nftables": [{"a": {"b": 1}', 'the input ends early: expected the end of an object'],
    ['{"nftables": []} x', 'expected the end of the input'],
  ];
  for (const [text, message] of bad) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      let err: unknown;
      try {
        items([text]);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OuterShapeError);
      expect((err as Error).message).toBe(message);
    });
  }
});
