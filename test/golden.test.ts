// The golden files are the output's specification: every fixture compiles to its golden
// file byte for byte, twice and with its objects shuffled.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, GOLDEN, golden, goldenStderr, listFixtures, shuffledSnapshot } from './helpers/fixtures.js';
import { fcFullSize } from './helpers/fc-runs.js';
import { kproxc } from './helpers/kproxc.js';

const fixtures = listFixtures();

describe('golden nftables output', () => {
  it('has fixtures', () => {
    expect(fixtures.length).toBeGreaterThan(10);
  });

  for (const f of fixtures) {
    it(f.name, async () => {
      // Named from the repository's root, as the golden warnings name it.
      const r = await kproxc(['compile', path.relative(path.join(FIXTURES, '..'), f.file), ...f.args]);
      // Most fixtures have no diagnostics; the warnings of the others are golden too.
      expect(r.stderr).toBe(goldenStderr(`${f.name}.nft.stderr`, r.stderr));
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(golden(`${f.name}.nft`, r.stdout));

      const again = await kproxc(['compile', f.file, ...f.args]);
      expect(again.stdout).toBe(r.stdout);

      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-shuffle-'));
      try {
        // Three orders in a full run; one in a quick one (FC_RUNS unset).
        for (const seed of fcFullSize() ? [1, 7, 42] : [7]) {
          const file = path.join(tmp, `${f.name}.yaml`);
          fs.writeFileSync(file, shuffledSnapshot(f.text, seed));
          const shuffled = await kproxc(['compile', file, ...f.args]);
          expect(shuffled.stdout, `shuffled with seed ${seed}`).toBe(r.stdout);
        }
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }

      const json = await kproxc(['compile', f.file, ...f.args, '--format', 'json']);
      expect(json.code).toBe(0);
      expect(() => JSON.parse(json.stdout)).not.toThrow();
    });
  }

  it('every golden file has a fixture', () => {
    const names = new Set(fixtures.map((f) => f.name));
    const orphans = fs
      .readdirSync(GOLDEN)
      .filter((n) => n.endsWith('.nft'))
      .map((n) => n.replace(/\.nft$/, ''))
      .filter((n) => !names.has(n));
    expect(orphans).toEqual([]);
  });
});

describe('error fixtures', () => {
  const errorCases = listFixtures(path.join(FIXTURES, '_error_'), true);
  it('has error fixtures', () => {
    expect(errorCases.length).toBeGreaterThan(5);
  });
  for (const f of errorCases) {
    it(f.name, async () => {
      const rel = path.relative(path.join(FIXTURES, '..'), f.file);
      const r = await kproxc(['compile', rel, ...f.args]);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(2);
      const actual = `exit: ${r.code}\n${r.stderr}`;
      expect(actual).toBe(golden(`_error_/${f.name}.txt`, actual));
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    });
  }
});
