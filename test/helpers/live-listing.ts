// A captured nft listing (fixtures/diff/<case>.live.json) with more items, spaced as nft
// prints its JSON (the compact read cuts items where nft starts them).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DIFF_FIXTURES } from './diff-cases.js';

/** The snapshot and the captured listing of a diff case. */
export const snap = (name: string): string => path.join(DIFF_FIXTURES, `${name}.yaml`);
export const live = (name: string): string => path.join(DIFF_FIXTURES, `${name}.live.json`);

/** The case's listing with more items before its closing `]}`. */
export function withItems(name: string, items: unknown[]): string {
  return fs.readFileSync(live(name), 'utf8').replace(/\]\}\s*$/, `${items.map((i) => `, ${spaced(i)}`).join('')}]}\n`);
}

/** JSON spaced as nft prints it. */
export function spaced(j: unknown): string {
  if (Array.isArray(j)) return `[${j.map(spaced).join(', ')}]`;
  if (j !== null && typeof j === 'object') return `{${Object.entries(j).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
  return JSON.stringify(j);
}
