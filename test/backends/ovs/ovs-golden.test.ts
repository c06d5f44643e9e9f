// `compile --backend ovs`: every case compiles to its golden bundle byte for byte, twice and
// with its objects shuffled; warnings are golden too. The bundle's own invariants (order,
// group references, message splitting) are checked on the text.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, GOLDEN, golden, goldenStderr, listFixtures, shuffledSnapshot } from '../../helpers/fixtures.js';
import { fcFullSize } from '../../helpers/fc-runs.js';
import { ROOT, kproxc } from '../../helpers/kproxc.js';
import { NFT_ONLY, ovsCases } from '../../helpers/ovs-cases.js';

const cases = ovsCases();

describe('golden ovs bundles', () => {
  it('covers the shared fixtures, its own and the examples', () => {
    expect(cases.filter((c) => !c.name.includes('/')).length).toBeGreaterThan(15);
    expect(cases.some((c) => c.name.startsWith('ovs/'))).toBe(true);
    expect(cases.some((c) => c.name.startsWith('examples/'))).toBe(true);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const rel = path.relative(ROOT, c.file);
      const r = await kproxc(['compile', '--backend', 'ovs', rel, ...c.args]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(golden(c.golden, r.stdout));
      expect(r.stderr).toBe(goldenStderr(`${c.golden}.stderr`, r.stderr));

      const again = await kproxc(['compile', '--backend', 'ovs', rel, ...c.args]);
      expect(again.stdout).toBe(r.stdout);

      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-ovs-shuffle-'));
      try {
        // Two orders in a full run; one in a quick one (FC_RUNS unset).
        for (const seed of fcFullSize() ? [3, 11] : [11]) {
          const file = path.join(tmp, 'snapshot.yaml');
          fs.writeFileSync(file, shuffledSnapshot(c.text, seed));
          const shuffled = await kproxc(['compile', '--backend', 'ovs', file, ...c.args]);
          expect(shuffled.stdout, `shuffled with seed ${seed}`).toBe(r.stdout);
        }
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    });
  }

  it('leaves out only the nftables-only fixtures, and every .ovs golden has a case', () => {
    const names = new Set(cases.map((c) => c.golden));
    const goldens = ['', 'ovs', 'examples'].flatMap((d) =>
      fs.existsSync(path.join(GOLDEN, d))
        ? fs
            .readdirSync(path.join(GOLDEN, d))
            .filter((n) => n.endsWith('.ovs'))
            .map((n) => (d ? `${d}/${n}` : n))
        : [],
    );
    expect(goldens.filter((g) => !names.has(g))).toEqual([]);
    for (const name of Object.keys(NFT_ONLY)) expect(fs.existsSync(path.join(GOLDEN, `${name}.nft`)), name).toBe(true);
  });
});

describe('bundle structure', () => {
  for (const c of cases) {
    it(`${c.name}: deletes first, groups before flows, every named group exists`, () => {
      const lines = fs.readFileSync(path.join(GOLDEN, c.golden), 'utf8').trimEnd().split('\n');
      expect(lines.slice(0, 2)).toEqual(['flow delete', 'group delete group_id=all']);
      const kinds = lines.slice(2).map((l) => (l.startsWith('group ') ? 'g' : l.startsWith('flow add ') ? 'f' : '?'));
      expect(kinds.join('')).toMatch(/^g*f+$/);
      const groups = new Set(lines.filter((l) => l.startsWith('group add')).map((l) => /group_id=(\d+)/.exec(l)![1]));
      for (const l of lines.filter((x) => x.startsWith('flow add'))) {
        for (const m of l.matchAll(/group:(\d+)/g)) expect(groups.has(m[1]), l).toBe(true);
      }
      for (const l of lines.filter((x) => x.startsWith('group '))) expect((l.match(/bucket=/g) ?? []).length).toBeLessThanOrEqual(700);
    });
  }
});

describe('compile --backend ovs on the command line', () => {
  const file = 'fixtures/clusterip.yaml';

  it('refuses --format, which only applies to nftables', async () => {
    const r = await kproxc(['compile', '--backend', 'ovs', '--format', 'json', file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--format does not apply to --backend ovs/);
  });

  it('writes -o atomically and prints nothing', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-ovs-out-'));
    try {
      const out = path.join(tmp, 'bundle.ofctl');
      const r = await kproxc(['compile', '--backend', 'ovs', file, '-o', out]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(fs.readFileSync(out, 'utf8')).toBe(fs.readFileSync(path.join(GOLDEN, 'clusterip.ovs'), 'utf8'));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('turns the affinity warning into an error with --strict', async () => {
    const r = await kproxc(['compile', '--backend', 'ovs', '--strict', 'fixtures/ovs/dual-stack-node.yaml']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/timeoutSeconds: 86400 seconds is more than an OpenFlow hard_timeout holds/);
  });

  // Bad input is found before any backend runs: the same diagnostics as for nftables.
  for (const f of listFixtures(path.join(FIXTURES, '_error_'), true)) {
    it(`reports ${f.name} as the nftables backend does, without a bundle`, async () => {
      const r = await kproxc(['compile', '--backend', 'ovs', path.relative(ROOT, f.file), ...f.args]);
      expect(r.stdout).toBe('');
      expect(`exit: ${r.code}\n${r.stderr}`).toBe(fs.readFileSync(path.join(GOLDEN, '_error_', `${f.name}.txt`), 'utf8'));
    });
  }
});
