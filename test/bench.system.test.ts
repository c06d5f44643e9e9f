// The benchmark runs end to end at a tiny size: snapshots generated as YAML and JSON, the
// built binary compiled with both backends, the ruleset loaded by real nft in a private
// namespace and listed, and a diff against that listing; the ovs bundle loaded into a
// private Open vSwitch and the ovs diff against its dumps. Nothing here looks at timings.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/kproxc.js';

describe('npm run bench', () => {
  it('measures compile, ovs compile, nft -f and diff, and writes its table as JSON', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-perf-bench-'));
    try {
      const json = path.join(dir, 'report.json');
      const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/bench.mjs'), '--sizes', '12', '--runs', '1', '--dir', dir, '--json', json], {
        encoding: 'utf8',
        cwd: ROOT,
      });
      expect(r.stderr).not.toMatch(/Error/);
      expect(r.status).toBe(0);
      const report = JSON.parse(fs.readFileSync(json, 'utf8'));
      const commands = report.rows.map((x: { format: string; command: string }) => `${x.format} ${x.command}`);
      expect(commands).toEqual([
        'yaml compile',
        'yaml compile --backend ovs',
        'yaml ovs diff (1 endpoint moved)',
        'yaml ovs diff (1 Service removed)',
        'yaml diff (1 endpoint moved)',
        'json compile',
        'json compile --backend ovs',
        'json ovs diff (1 endpoint moved)',
        'json ovs diff (1 Service removed)',
        'json diff (1 endpoint moved)',
      ]);
      for (const row of report.rows) {
        expect(row.size).toBe(12);
        expect(row.rssMB).toBeGreaterThan(0);
        // CPU of all the process's threads, read from GNU time (NaN if it were misread).
        expect(row.cpuMedian).toBeGreaterThan(0);
        expect(row.outputBytes).toBeGreaterThan(0);
        // Each nftables compile run follows a run of the calibration workload; each ovs
        // compile and nftables diff run, a run of the nftables compile; each ovs diff run,
        // a run of the ovs compile (against a private Open vSwitch's dumps).
        const ovsDiff = row.command.startsWith('ovs diff');
        expect(row.pairedWith).toBe(row.command === 'compile' ? 'calibration' : ovsDiff ? 'ovs compile' : 'compile');
        if (ovsDiff) expect(row.bundleLines).toBeGreaterThan(0);
        expect(row.pairedMedian).toBeGreaterThan(0);
        expect(row.vsPaired).toBeGreaterThan(0);
      }
      expect(report.nft).toHaveLength(1);
      expect(report.nft[0].loadSeconds).toBeGreaterThan(0);
      // The diff for one moved endpoint is small; the compile is the whole table.
      const size = (command: string) => report.rows.find((x: { format: string; command: string }) => x.format === 'yaml' && x.command === command).outputBytes;
      expect(size('diff (1 endpoint moved)')).toBeLessThan(size('compile') / 2);
      expect(r.stdout).toContain('nft -f, 12 Services');
      expect(r.stdout).toContain('CPU median');
      expect(r.stdout).toContain('x calibration (');
      expect(r.stdout).toContain('x compile (');
      // Both formats give the same ruleset.
      expect(fs.readFileSync(path.join(dir, 'out/compile-12.yaml.nft'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'out/compile-12.json.nft'), 'utf8'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
