// The golden files are the output's specification: every fixture compiles to its golden
// files byte for byte, for each kind of table (kube-proxy's layout of each release, and
// fast-load), as text and as JSON; and kube-proxy 1.35's text the same twice and with the
// snapshot's objects shuffled.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TABLE_KINDS, type TableKind } from '../../../src/backends/nftables/layout.js';
import {
  FIXTURES,
  GOLDEN,
  GOLDEN_DIRS,
  golden,
  goldenStderr,
  jsonFromGolden,
  jsonGoldenForm,
  kindArgs,
  kindGolden,
  listFixtures,
  shuffledSnapshot,
  type Fixture,
} from '../../helpers/fixtures.js';
import { fcFullSize } from '../../helpers/fc-runs.js';
import { kproxc } from '../../helpers/kproxc.js';

const fixtures = listFixtures();

/** The kind whose goldens stand at the top, and whose text is also compiled shuffled. */
const FIRST = TABLE_KINDS[0];

/** The same text from a second run and from the snapshot's objects in other orders. */
async function expectSameWhenShuffled(f: Fixture, text: string): Promise<void> {
  const args = [...f.args, ...kindArgs(FIRST)];
  const again = await kproxc(['compile', f.file, ...args]);
  expect(again.stdout).toBe(text);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-shuffle-'));
  try {
    // Three orders in a full run; one in a quick one (FC_RUNS unset).
    for (const seed of fcFullSize() ? [1, 7, 42] : [7]) {
      const file = path.join(tmp, `${f.name}.yaml`);
      fs.writeFileSync(file, shuffledSnapshot(f.text, seed));
      const shuffled = await kproxc(['compile', file, ...args]);
      expect(shuffled.stdout, `shuffled with seed ${seed}`).toBe(text);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The warnings are the model's, whatever the kind of table: the first kind's golden ones. */
function expectedStderr(f: Fixture, kind: TableKind, stderr: string): string {
  if (kind === FIRST) return goldenStderr(`${f.name}.nft.stderr`, stderr);
  const file = path.join(GOLDEN, `${f.name}.nft.stderr`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

describe('golden nftables output', () => {
  it('has fixtures', () => {
    expect(fixtures.length).toBeGreaterThan(10);
  });

  for (const kind of TABLE_KINDS) {
    describe(kind.name, () => {
      for (const f of fixtures) {
        it(f.name, async () => {
          // Named from the repository's root, as the golden warnings name it.
          const r = await kproxc(['compile', path.relative(path.join(FIXTURES, '..'), f.file), ...f.args, ...kindArgs(kind)]);
          // Most fixtures have no diagnostics; the warnings of the others are golden too.
          expect(r.stderr).toBe(expectedStderr(f, kind, r.stderr));
          expect(r.code).toBe(0);
          expect(r.stdout).toBe(golden(kindGolden(kind, f.name, 'nft'), r.stdout));
          if (kind === FIRST) await expectSameWhenShuffled(f, r.stdout);

          const json = await kproxc(['compile', f.file, ...f.args, ...kindArgs(kind), '--format', 'json']);
          expect(json.code, json.stderr).toBe(0);
          const form = jsonGoldenForm(json.stdout);
          // The golden file holds the output byte for byte, one command a line.
          expect(jsonFromGolden(golden(kindGolden(kind, f.name, 'json'), form))).toBe(json.stdout);
        });
      }
    });
  }

  it('every golden file has a fixture', () => {
    const names = new Set(fixtures.map((f) => f.name));
    const orphans = TABLE_KINDS.flatMap((kind) =>
      fs
        .readdirSync(path.join(GOLDEN, GOLDEN_DIRS[kind.name]))
        .filter((n) => /\.(nft|json)$/.test(n))
        .filter((n) => !names.has(n.replace(/\.(nft|json)$/, '')))
        .map((n) => path.join(GOLDEN_DIRS[kind.name], n)),
    );
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
