// A table loaded from kproxc's own output diffs empty, whichever way nft loaded it: every
// golden fixture, in both layouts, compiled as text and loaded with `nft -f`, and compiled
// as JSON and loaded with `nft -j -f` (nft 1.0.6's JSON loader drops the comments of sets
// and maps, and fast-load's JSON keeps per-endpoint affinity sets: docs/diff.md), then
// `diff --exit-code` of the same snapshot against what nft lists. One namespace per load
// path, flushed before each load.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { FIXTURES, GOLDEN, kindArgs, listFixtures } from '../helpers/fixtures.js';
import { kproxc } from '../helpers/kproxc.js';
import { ourState, tempFiles } from '../helpers/diff-nft.js';
import { createNetns, withNetns, type Netns } from '../helpers/netns.js';

/** The fixtures with a golden ruleset (golden/<name>.nft). */
const fixtures = listFixtures().filter((f) => fs.existsSync(path.join(GOLDEN, `${f.name}.nft`)));

const LOAD_PATHS = [
  { format: 'text', load: ['-f', '-'], how: 'nft -f' },
  { format: 'json', load: ['-j', '-f', '-'], how: 'nft -j -f' },
] as const;

/** Listing items without the comments of sets and maps. */
function withoutSetComments(items: unknown[]): unknown[] {
  return (items as Record<string, Record<string, unknown>>[]).map((x) => {
    const kind = Object.keys(x)[0];
    if (kind !== 'set' && kind !== 'map') return x;
    const { comment: _c, ...rest } = x[kind];
    return { [kind]: rest };
  });
}

async function run(args: string[], stdin = ''): Promise<string> {
  const r = await kproxc(args, stdin);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe.each(LOAD_PATHS)('compile --format $format loaded with $how', ({ format, load }) => {
  let ns: Netns;
  beforeAll(() => {
    ns = createNetns('jd', format);
  });
  afterAll(() => ns?.destroy());

  it('covers every golden ruleset', () => {
    const goldens = fs.readdirSync(GOLDEN).filter((n) => n.endsWith('.nft')).map((n) => n.slice(0, -'.nft'.length));
    // kube-proxy-configmap is both a .yaml and a .json fixture, with one golden.
    expect([...new Set(fixtures.map((f) => f.name))].sort()).toEqual(goldens.sort());
  });

  for (const f of fixtures) {
    for (const kind of TABLE_KINDS) {
      it(`${path.basename(f.file)} ${kind.name}: diff is empty`, async () => {
        const compiled = await run(['compile', ...kindArgs(kind), '--format', format, f.file, ...f.args]);
        ns.nft(['flush', 'ruleset']);
        ns.nft([...load], compiled);
        const listing = ns.nft(['-j', 'list', 'ruleset']);
        const diff = await kproxc(['diff', ...kindArgs(kind), '--exit-code', '--live', '-', f.file, ...f.args], listing);
        expect(diff.stdout, diff.stderr).toBe('');
        expect(diff.code, diff.stderr).toBe(0);
      });
    }
  }
});

// fast-load's JSON form keeps kube-proxy's per-endpoint affinity sets; the first change
// moves the table to the text form (the table-wide set), which the transaction declares.
describe('a fast-load table loaded from JSON', () => {
  const { write } = tempFiles('jd');
  const file = path.join(FIXTURES, 'session-affinity.yaml');
  const text = fs.readFileSync(file, 'utf8');
  const changed = write('changed.yaml', text.replace('- {addresses: [10.180.0.1]}\n', ''));
  const fl = ['--layout', 'fast-load'];

  it('is moved to the text form by its first change, and converges', async () => {
    expect(fs.readFileSync(changed, 'utf8')).not.toBe(text);
    await withNetns('jd', async (ns) => {
      ns.nft(['-j', '-f', '-'], await run(['compile', ...fl, '--format', 'json', file]));
      const tx = await run(['diff', ...fl, '--live', '-', changed], ns.nft(['-j', 'list', 'ruleset']));
      expect(tx).toContain('add set ip kube-proxy affinity {');
      ns.nft(['-f', '-'], tx);
      expect(await run(['diff', ...fl, '--live', '-', changed], ns.nft(['-j', 'list', 'ruleset']))).toBe('');
      const fresh = await withNetns('jd', async (other) => {
        other.nft(['-f', '-'], await run(['compile', ...fl, changed]));
        return withoutSetComments(ourState(other.nft(['-j', 'list', 'ruleset'])));
      });
      // The sets JSON made keep the comments it could not give them: diff does not compare them.
      expect(withoutSetComments(ourState(ns.nft(['-j', 'list', 'ruleset'])))).toEqual(fresh);
    });
  });
});
