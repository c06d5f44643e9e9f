// The bundle bin/kproxc runs (scripts/bundle.mjs): the files it finds next to itself are
// there, and the process it makes prints what the modules do.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kproxc, ROOT, BIN } from '../helpers/kproxc.js';

const BUNDLE = path.join(ROOT, 'dist/bundle');

describe('the bundle bin/kproxc runs', () => {
  it('is what bin/kproxc imports', () => {
    expect(fs.readFileSync(BIN, 'utf8')).toContain("import '../dist/bundle/kproxc.js'");
    expect(fs.existsSync(path.join(BUNDLE, 'kproxc.js'))).toBe(true);
  });

  it('has every file its code loads by a URL next to it (the diff listing worker)', () => {
    const wanted = new Set<string>();
    for (const f of fs.readdirSync(BUNDLE).filter((n) => n.endsWith('.js'))) {
      for (const m of fs.readFileSync(path.join(BUNDLE, f), 'utf8').matchAll(/new URL\("\.\/([^"]+)", import\.meta\.url\)/g)) wanted.add(m[1]);
    }
    expect([...wanted]).toContain('live-worker.js');
    for (const w of wanted) expect(fs.existsSync(path.join(BUNDLE, w)), w).toBe(true);
  });

  it('prints the same ruleset as the modules it was made of', async () => {
    const file = path.join(ROOT, 'examples/cluster.yaml');
    const real = spawnSync(process.execPath, [BIN, 'compile', file], { encoding: 'utf8' });
    const modules = await kproxc(['compile', file]);
    expect(real.status).toBe(0);
    expect(modules.code).toBe(0);
    expect(real.stdout).toBe(modules.stdout);
    expect(real.stdout).toContain('add table ip kube-proxy');
  });

  it('writes a ruleset of many chunks alike to a file, to a pipe read slowly, and with -o', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-out-'));
    try {
      const snap = path.join(dir, 'snap.yaml');
      fs.writeFileSync(snap, execFileSync(process.execPath, [path.join(ROOT, 'scripts/gen-snapshot.mjs'), '--services', '3000', '--endpoints', '10', '--mixed'], { maxBuffer: 1 << 28 }));
      const viaO = path.join(dir, 'o.nft');
      expect(spawnSync(process.execPath, [BIN, 'compile', '--layout', 'fast-load', snap, '-o', viaO]).status).toBe(0);
      const want = fs.readFileSync(viaO);
      expect(want.length).toBeGreaterThan(2 << 20); // many of the writer's chunks
      // Standard output a file: written without a copy of each chunk.
      const toFile = path.join(dir, 'file.nft');
      const fd = fs.openSync(toFile, 'w');
      const r = spawnSync(process.execPath, [BIN, 'compile', '--layout', 'fast-load', snap], { stdio: ['ignore', fd, 'pipe'] });
      fs.closeSync(fd);
      expect(r.status).toBe(0);
      expect(fs.readFileSync(toFile).equals(want)).toBe(true);
      // A pipe whose reader starts late: writes queue, and each must keep its own bytes.
      const slow = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" compile --layout fast-load "${snap}" | (sleep 1; cat)`], { maxBuffer: 1 << 28 });
      expect(slow.status).toBe(0);
      expect(slow.stdout.equals(want)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
