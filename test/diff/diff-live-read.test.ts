// How `kproxc diff` reads the live listing: compactly, and the long way when the listing
// has a problem in the tables it needs. The output and the diagnostics are the same either
// way. (A listing large enough for the worker thread: diff-live-worker.slow.test.ts.)
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIFF_FIXTURES } from '../helpers/diff-cases.js';
import { tempFiles } from '../helpers/diff-nft.js';
import { BIN, kproxc } from '../helpers/kproxc.js';
import { live, snap, withItems } from '../helpers/live-listing.js';

/** The fixtures' live tables are kube-proxy 1.35's: compared with its table, without the release read from them. */
const V135 = ['--kube-proxy-version', '1.35'];

describe('kproxc diff reading the live listing', () => {
  const { dir, write } = tempFiles('read');

  it('a problem in our table of a family the snapshot does not use is not read', async () => {
    const f = write('ip6-flowtable.json', withItems('unchanged', [{ table: { family: 'ip6', name: 'kube-proxy', handle: 90 } }, { flowtable: { family: 'ip6', table: 'kube-proxy', name: 'ft', handle: 91 } }]));
    const r = await kproxc(['diff', ...V135, snap('unchanged'), '--live', f, '--exit-code']);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('a problem in our table is reported with its position, as the long way reads it', async () => {
    const f = write('flowtable.json', withItems('unchanged', [{ flowtable: { family: 'ip', table: 'kube-proxy', name: 'ft', handle: 91 } }]));
    const r = await kproxc(['diff', ...V135, snap('unchanged'), '--live', f]);
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
      const r = spawnSync('sh', ['-c', 'cat "$1" > "$2" & exec "$3" "$4" diff "$5" --live "$2" --kube-proxy-version 1.35', 'sh', file, fifo, process.execPath, BIN, snap(name.replace(/-bad$/, ''))], {
        encoding: 'utf8',
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const bad = viaPipe('unchanged-bad', withItems('unchanged', [{ flowtable: { family: 'ip', table: 'kube-proxy', name: 'ft', handle: 91 } }]));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unchanged-bad\.fifo:1:\d+: flowtable ft: a flowtable in table ip kube-proxy is not something kproxc writes/);
    const good = viaPipe('endpoint-moved', fs.readFileSync(live('endpoint-moved'), 'utf8'));
    expect(good).toEqual({ code: 0, stdout: fs.readFileSync(path.join(DIFF_FIXTURES, '../../golden/diff/endpoint-moved.diff.nft'), 'utf8'), stderr: '' });
  });
});
