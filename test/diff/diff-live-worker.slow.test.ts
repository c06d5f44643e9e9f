// `kproxc diff` with a live listing large enough to be read on a worker thread, through the
// real process: the same output as the small listing gives. Slow by its size (an 8 MiB
// listing written and read twice), so in the `slow` project, which `npm test` runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempFiles } from '../helpers/diff-nft.js';
import { kproxcProcess } from '../helpers/kproxc.js';
import { live, snap, withItems } from '../helpers/live-listing.js';

describe('kproxc diff reading a large live listing', () => {
  const { write } = tempFiles('read-large');

  it('a large listing (read on a worker thread) diffs as a small one', () => {
    // The endpoint-moved listing with foreign tables enough to pass the worker's threshold.
    const foreign: unknown[] = [];
    for (let t = 0; foreign.length < 120_000; t++) {
      const table = `padding${t}`;
      foreign.push({ table: { family: 'inet', name: table, handle: 1 } }, { chain: { family: 'inet', table, name: 'c', handle: 2 } });
      for (let r = 0; r < 1000; r++) {
        foreign.push({ rule: { family: 'inet', table, chain: 'c', handle: 3 + r, expr: [{ match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: r } }, { accept: null }] } });
      }
    }
    const big = write('big.json', withItems('endpoint-moved', foreign));
    expect(fs.statSync(big).size).toBeGreaterThan(8 * 2 ** 20);
    const small = kproxcProcess(['diff', path.relative(process.cwd(), snap('endpoint-moved')), '--live', live('endpoint-moved')]);
    const viaWorker = kproxcProcess(['diff', snap('endpoint-moved'), '--live', big]);
    expect(viaWorker).toEqual(small);
    expect(small.stdout).not.toBe('');
  });
});
