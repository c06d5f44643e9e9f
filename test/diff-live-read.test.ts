// How `kproxc diff` reads the live listing: compactly (on a worker thread when the file is
// large), and the long way when the listing has a problem in the tables it needs. The
// output and the diagnostics are the same either way.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIFF_FIXTURES } from './helpers/diff-cases.js';
import { tempFiles } from './helpers/diff-nft.js';
import { BIN, kproxc, kproxcProcess } from './helpers/kproxc.js';

const snap = (name: string) => path.join(DIFF_FIXTURES, `${name}.yaml`);
const live = (name: string) => path.join(DIFF_FIXTURES, `${name}.live.json`);

describe('kproxc diff reading the live listing', () => {
  const { dir, write } = tempFiles('read');
  /** The listing with more items before its closing `]}`. */
  const withItems = (name: string, items: unknown[]) =>
    fs.readFileSync(live(name), 'utf8').replace(/\]\}\s*$/, `${items.map((i) => `, ${spaced(i)}`).join('')}]}\n`);

  it('a problem in our table of a family the snapshot does not use is not read', async () => {
    const f = write('ip6-flowtable.json', withItems('unchanged', [{ table: { family: 'ip6', name: 'kube-proxy', handle: 90 } }, { flowtable: { family: 'ip6', table: 'kube-proxy', name: 'ft', handle: 91 } }]));
    const r = await kproxc(['diff', snap('unchanged'), '--live', f, '--exit-code']);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('a problem in our table is reported with its position, as the long way reads it', async () => {
    const f = write('flowtable.json', withItems('unchanged', [{ flowtable: { family: 'ip', table: 'kube-proxy', name: 'ft', handle: 91 } }]));
    const r = await kproxc(['diff', snap('unchanged'), '--live', f]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/flowtable\.json:1:\d+: flowtable ft: a flowtable in table ip kube-proxy is not something kproxc writes; kproxc cannot diff a table holding this \(replace it with `kproxc compile`\)\n$/);
  });

  it('a listing from a pipe is read once: a problem in it is still reported with its position', () => {
    // As `kproxc diff ... --live <(nft -j list ruleset)` gives it: a named pipe, written once.
    const viaPipe = (name: string, listing: string) => {
      const file = write(`${name}.json`, listing);
      const fifo = path.join(dir, `${name}.fifo`);
      execFileSync('mkfifo', [fifo]);
      const r = spawnSync('sh', ['-c', 'cat "$1" > "$2" & exec "$3" "$4" diff "$5" --live "$2"', 'sh', file, fifo, process.execPath, BIN, snap(name.replace(/-bad$/, ''))], { encoding: 'utf8' });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const bad = viaPipe('unchanged-bad', withItems('unchanged', [{ flowtable: { family: 'ip', table: 'kube-proxy', name: 'ft', handle: 91 } }]));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unchanged-bad\.fifo:1:\d+: flowtable ft: a flowtable in table ip kube-proxy is not something kproxc writes/);
    const good = viaPipe('endpoint-moved', fs.readFileSync(live('endpoint-moved'), 'utf8'));
    expect(good).toEqual({ code: 0, stdout: fs.readFileSync(path.join(DIFF_FIXTURES, '../../golden/diff/endpoint-moved.diff.nft'), 'utf8'), stderr: '' });
  });

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

/** JSON spaced as nft prints it. */
function spaced(j: unknown): string {
  if (Array.isArray(j)) return `[${j.map(spaced).join(', ')}]`;
  if (j !== null && typeof j === 'object') return `{${Object.entries(j).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
  return JSON.stringify(j);
}
