// The golden diff cases on the real kernel. Each case's live state is rebuilt in a fresh
// namespace and must list exactly as its captured fixture (handles included, so that a
// `delete rule ... handle N` in the golden output means the same rule); then the golden
// diff is applied and must converge: the state lists as a fresh load of the snapshot, a
// second diff is empty, and the foreign tables are untouched.
// UPDATE_GOLDEN=1 recaptures the listings (and the golden diffs) from this machine's nft.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLive, listDiffCases, withoutExpiry } from '../helpers/diff-cases.js';
import { applyAndCheck, notOurs, tempDir } from '../helpers/diff-nft.js';
import { golden, UPDATE } from '../helpers/fixtures.js';
import { kproxc } from '../helpers/kproxc.js';
import { createNetns } from '../helpers/netns.js';

describe('golden diff cases on real nft', () => {
  for (const c of listDiffCases()) {
    it(c.name, async () => {
      const live = createNetns('diff');
      const fresh = createNetns('diff');
      const dir = tempDir('case');
      try {
        await buildLive(live, c);
        const listing = live.nft(['-j', 'list', 'ruleset']);
        if (UPDATE) fs.writeFileSync(c.liveFile, listing);
        expect(withoutExpiry(listing), 'the fixture is what nft lists for this state').toEqual(
          withoutExpiry(fs.readFileSync(c.liveFile, 'utf8')),
        );

        const laterFile = path.join(dir, 'later.nft');
        const r = await kproxc(['diff', c.file, ...c.args, '--live', c.liveFile, ...(c.twoPhase ? ['--two-phase', laterFile] : [])]);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const now = golden(`diff/${c.name}.diff.nft`, r.stdout);
        expect(r.stdout).toBe(now);
        const later = c.twoPhase ? golden(`diff/${c.name}.later.nft`, fs.readFileSync(laterFile, 'utf8')) : '';

        const foreign = notOurs(listing);
        await applyAndCheck(live, fresh, dir, c.file, { now, later, code: 0 }, c.args);
        expect(notOurs(live.nft(['-j', 'list', 'ruleset']))).toEqual(foreign);
        for (const d of c.drift.filter((x) => x.includes('affinity-'))) {
          const [, set, member] = /(affinity-\S+) \{ (\S+) \}/.exec(d)!;
          expect(live.nft(['list', 'set', 'ip', 'kube-proxy', set]), 'a hand-added affinity member survives').toContain(member);
        }
      } finally {
        live.destroy();
        fresh.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
