// The npm package as a user gets it: `npm pack` (whose prepack builds the bundle from the
// sources) gives a small tarball of what runs and nothing else; installed from that file
// into an empty directory, without scripts and without the registry, `npx kproxc` prints
// the version, compiles the example to its golden files, reports bad input with the full
// parser (a lazily loaded file of its own), and diffs a listing large enough to be read on
// the worker thread. The repository is copied first: packing builds, and the other tests
// run the repository's own build meanwhile.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIFF_FIXTURES } from './helpers/diff-cases.js';
import { FIXTURES, golden, GOLDEN } from './helpers/fixtures.js';
import { kproxc, ROOT } from './helpers/kproxc.js';

/** What building and packing need of the repository. */
const SOURCES = ['src', 'scripts', 'bin', 'package.json', 'package-lock.json', 'tsconfig.json', 'README.md', 'LICENSE'];
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: object };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-package-'));
const repo = path.join(tmp, 'repo');
const installed = path.join(tmp, 'installed');
// No registry, and a cache of our own: nothing may need either.
const npmEnv = { ...process.env, npm_config_offline: 'true', npm_config_cache: path.join(tmp, 'npm-cache'), npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

function npm(args: string[], cwd: string, opts: SpawnSyncOptions = {}): string {
  const r = spawnSync('npm', args, { cwd, env: npmEnv, encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}:\n${String(r.stderr)}`);
  return String(r.stdout);
}

/** The installed kproxc, as a user runs it. */
function npx(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync('npx', ['kproxc', ...args], { cwd: installed, env: npmEnv, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}
let packed: Packed;

beforeAll(() => {
  fs.mkdirSync(repo);
  for (const s of SOURCES) fs.cpSync(path.join(ROOT, s), path.join(repo, s), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(repo, 'node_modules'));
  [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], repo)) as Packed[];
  fs.mkdirSync(installed);
  npm(['install', '--ignore-scripts', '--offline', path.join(tmp, packed.filename)], installed);
}, 600_000);

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds what runs and nothing else: no sources, tests, fixtures or goldens', () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toContain('bin/kproxc');
    expect(files).toContain('dist/bundle/kproxc.js');
    expect(files).toContain('LICENSE');
    expect(files).toContain('README.md');
    expect(files).toContain('package.json');
    for (const f of files) expect(f, f).toMatch(/^(bin\/kproxc|dist\/bundle\/[\w.-]+\.c?js|LICENSE|README\.md|package\.json)$/);
    expect(files.length).toBeLessThan(40);
    expect(packed.unpackedSize).toBeLessThan(2_000_000);
  });

  it('has no dependencies: the bundle carries them', () => {
    expect(PACKAGE.dependencies ?? {}).toEqual({});
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'node_modules', PACKAGE.name, 'package.json'), 'utf8')) as { dependencies?: object };
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(fs.readdirSync(path.join(installed, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual([PACKAGE.name]);
  });

  it('installed, prints its version', () => {
    expect(npx(['--version'])).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
  });

  it('installed, compiles the example to its golden nftables ruleset and ovs bundle', () => {
    fs.copyFileSync(path.join(ROOT, 'examples/cluster.yaml'), path.join(installed, 'cluster.yaml'));
    const nft = npx(['compile', 'cluster.yaml']);
    expect(nft.stderr).toBe('');
    expect(nft.code).toBe(0);
    expect(nft.stdout).toBe(golden('examples/cluster.nft', nft.stdout));
    // The ovs backend is a chunk loaded only when asked for.
    const ovs = npx(['compile', '--backend', 'ovs', 'cluster.yaml']);
    expect(ovs.code).toBe(0);
    expect(ovs.stdout).toBe(fs.readFileSync(path.join(GOLDEN, 'examples/cluster.ovs'), 'utf8'));
  });

  it('installed, traces a packet as the sources do', async () => {
    const args = ['cluster.yaml', '--src', '10.244.1.3', '--dst', '10.96.0.10', '--dport', '53', '--proto', 'udp', '--json'];
    fs.copyFileSync(path.join(ROOT, 'examples/cluster.yaml'), path.join(installed, 'cluster.yaml'));
    const r = npx(['trace', ...args]);
    expect(r.code).toBe(0);
    const inProcess = await kproxc(['trace', path.join(ROOT, 'examples/cluster.yaml'), ...args.slice(1)]);
    expect(r.stdout).toBe(inProcess.stdout);
    expect(r.stdout).toContain('"verdict":');
  });

  it('installed, reports bad input with its positions (the full YAML parser, a file of its own)', () => {
    const rel = 'fixtures/_error_/bad-ip.yaml';
    fs.mkdirSync(path.join(installed, path.dirname(rel)), { recursive: true });
    fs.copyFileSync(path.join(FIXTURES, '_error_/bad-ip.yaml'), path.join(installed, rel));
    const r = npx(['compile', rel]);
    expect(r.stdout).toBe('');
    expect(`exit: ${r.code}\n${r.stderr}`).toBe(fs.readFileSync(path.join(GOLDEN, '_error_/bad-ip.txt'), 'utf8'));
  });

  it('installed, diffs a listing large enough to be read on the worker thread, which it carries', () => {
    const bundle = path.join(installed, 'node_modules', PACKAGE.name, 'dist/bundle');
    const started = new Set<string>();
    for (const f of fs.readdirSync(bundle).filter((n) => n.endsWith('.js'))) {
      for (const m of fs.readFileSync(path.join(bundle, f), 'utf8').matchAll(/new URL\("\.\/([^"]+)", import\.meta\.url\)/g)) started.add(m[1]);
    }
    expect([...started]).toContain('live-worker.js');
    for (const w of started) expect(fs.existsSync(path.join(bundle, w)), w).toBe(true);

    // The endpoint-moved listing with foreign tables enough to pass the worker's threshold.
    const foreign: string[] = [];
    for (let t = 0; foreign.length < 120_000; t++) {
      const table = `padding${t}`;
      foreign.push(`{"table": {"family": "inet", "name": "${table}", "handle": 1}}`, `{"chain": {"family": "inet", "table": "${table}", "name": "c", "handle": 2}}`);
      for (let r = 0; r < 1000; r++) {
        foreign.push(
          `{"rule": {"family": "inet", "table": "${table}", "chain": "c", "handle": ${3 + r}, "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": ${r}}}, {"accept": null}]}}`,
        );
      }
    }
    const listing = fs.readFileSync(path.join(DIFF_FIXTURES, 'endpoint-moved.live.json'), 'utf8').replace(/\]\}\s*$/, `${foreign.map((i) => `, ${i}`).join('')}]}\n`);
    fs.writeFileSync(path.join(installed, 'live.json'), listing);
    expect(fs.statSync(path.join(installed, 'live.json')).size).toBeGreaterThan(8 * 2 ** 20);
    fs.copyFileSync(path.join(DIFF_FIXTURES, 'endpoint-moved.yaml'), path.join(installed, 'endpoint-moved.yaml'));
    const r = npx(['diff', 'endpoint-moved.yaml', '--live', 'live.json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(fs.readFileSync(path.join(GOLDEN, 'diff/endpoint-moved.diff.nft'), 'utf8'));
    expect(r.stdout).not.toBe('');
  });
});
