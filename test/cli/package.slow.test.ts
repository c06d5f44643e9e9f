// The npm package as a user gets it: `npm pack` (whose prepack builds the bundle from the
// sources) gives a small tarball of what runs and what the README sends its reader to (the
// docs and the example cluster); installed from that file as the README says, into an empty
// directory and globally, without the registry, npm warns of no script, every file the
// README links to is there, the README's quick start runs on the example it carries, and
// `npx kproxc` prints the version, compiles the example to its golden files, reports bad
// input with the full parser (a lazily loaded file of its own), and diffs a listing large
// enough to be read on the worker thread. The repository is copied first: packing builds,
// and the other tests run the repository's own build meanwhile.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIFF_FIXTURES } from '../helpers/diff-cases.js';
import { FIXTURES, golden, GOLDEN } from '../helpers/fixtures.js';
import { kproxc, ROOT } from '../helpers/kproxc.js';

/** What building and packing need of the repository. */
const SOURCES = ['src', 'scripts', 'bin', 'docs', 'examples', 'package.json', 'package-lock.json', 'tsconfig.json', 'README.md', 'LICENSE'];
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: object };

/**
 * The scripts npm may run when it installs a package from a tarball: a dependency's
 * install scripts, and `prepare` for one that comes from no registry. npm 11 holds each of
 * them back until the user approves it, with a warning on every install.
 */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-package-'));
const repo = path.join(tmp, 'repo');
const installed = path.join(tmp, 'installed');
/** The prefix of a global install (`npm install --global`), kept inside tmp. */
const globalPrefix = path.join(tmp, 'global');
// No registry, and a cache of our own: nothing may need either.
const npmEnv = { ...process.env, npm_config_offline: 'true', npm_config_cache: path.join(tmp, 'npm-cache'), npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

function npm(args: string[], cwd: string, opts: SpawnSyncOptions = {}): { stdout: string; stderr: string } {
  const r = spawnSync('npm', args, { cwd, env: npmEnv, encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}:\n${String(r.stderr)}`);
  return { stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** npm's warnings in what it printed on standard error. */
const npmWarnings = (stderr: string) => stderr.split('\n').filter((l) => /^npm warn/i.test(l));

/** The installed package's folder. */
const installedPackage = path.join(installed, 'node_modules', PACKAGE.name);

/**
 * The files a Markdown file links to by a relative address, each with the anchor it names
 * (or none), as GitHub and npm's page resolve them: against the file's own folder. Links in
 * code are not links.
 */
function relativeLinks(file: string): { target: string; anchor?: string }[] {
  const text = fs.readFileSync(file, 'utf8').replace(/^```.*?^```/gms, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((href) => !/^[a-z][\w+.-]*:/i.test(href))
    .map((href) => {
      const [rel, anchor] = href.split('#');
      return { target: rel === '' ? file : path.resolve(path.dirname(file), rel), anchor };
    });
}

/** The anchors of a Markdown file's headings, made as GitHub makes them. */
function headingAnchors(file: string): Set<string> {
  const text = fs.readFileSync(file, 'utf8').replace(/^```.*?^```/gms, '');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every file reached from a Markdown file by relative links, and every link that does not resolve. */
function followLinks(start: string, within: string): { reached: string[]; broken: string[] } {
  const reached = new Set<string>([start]);
  const broken: string[] = [];
  const queue = [start];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const { target, anchor } of relativeLinks(file)) {
      const shown = `${path.relative(within, file)} -> ${path.relative(within, target)}${anchor === undefined ? '' : `#${anchor}`}`;
      if (!target.startsWith(within + path.sep) || !fs.existsSync(target)) {
        broken.push(shown);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !headingAnchors(target).has(anchor)) broken.push(`${shown} (no such heading)`);
      if (!reached.has(target)) {
        reached.add(target);
        if (target.endsWith('.md')) queue.push(target);
      }
    }
  }
  return { reached: [...reached].map((f) => path.relative(within, f)).sort(), broken };
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
/** What npm printed on standard error installing the tarball into a project, and globally. */
let installStderr: string;
let globalInstallStderr: string;

beforeAll(() => {
  fs.mkdirSync(repo);
  for (const s of SOURCES) fs.cpSync(path.join(ROOT, s), path.join(repo, s), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(repo, 'node_modules'));
  [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], repo).stdout) as Packed[];
  // As the README says: scripts not turned off, so that npm says what it thinks of ours.
  fs.mkdirSync(installed);
  installStderr = npm(['install', path.join(tmp, packed.filename)], installed).stderr;
  globalInstallStderr = npm(['install', '--global', path.join(tmp, packed.filename)], tmp, { env: { ...npmEnv, npm_config_prefix: globalPrefix } }).stderr;
}, 600_000);

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds what runs and what the README points to, and nothing else: no sources, tests, fixtures or goldens', () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toContain('bin/kproxc');
    expect(files).toContain('dist/bundle/kproxc.js');
    expect(files).toContain('LICENSE');
    expect(files).toContain('README.md');
    expect(files).toContain('package.json');
    expect(files).toContain('examples/cluster.yaml');
    for (const f of files) expect(f, f).toMatch(/^(bin\/kproxc|dist\/bundle\/[\w.-]+\.c?js|docs\/[\w-]+\.md|examples\/[\w-]+\.yaml|LICENSE|README\.md|package\.json)$/);
    expect(files.length).toBeLessThan(40);
    expect(packed.unpackedSize).toBeLessThan(2_000_000);
  });

  it('installs without a word from npm about scripts, into a project and globally', () => {
    // npm 11 warns of a `prepare` (or install script) in a tarball's manifest, whether or not
    // the file it runs was packed; an npm that does not warn still finds none to run.
    expect(npmWarnings(installStderr).filter((l) => /script/i.test(l))).toEqual([]);
    expect(npmWarnings(globalInstallStderr).filter((l) => /script/i.test(l))).toEqual([]);
    const manifest = JSON.parse(fs.readFileSync(path.join(installedPackage, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    expect(Object.keys(manifest.scripts ?? {}).filter((s) => INSTALL_SCRIPTS.includes(s))).toEqual([]);
  });

  it('installed, holds every file the README links to, and every link in them resolves there', () => {
    const { reached, broken } = followLinks(path.join(installedPackage, 'README.md'), installedPackage);
    expect(broken).toEqual([]);
    // The README's own links reach the docs, and theirs each other: the whole folder, as in the repository.
    const docs = fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`);
    for (const d of docs) expect(reached, d).toContain(d);
    expect(reached.length).toBeGreaterThan(docs.length);
  });

  it("installed, runs the README's quick start on the example cluster it carries, in a project and globally", () => {
    const readme = fs.readFileSync(path.join(installedPackage, 'README.md'), 'utf8');
    const inProject = /`(npx kproxc compile node_modules\/kproxc\/[^`]+)`/.exec(readme);
    const global = /`(kproxc compile "\$\(npm root --global\)\/kproxc\/[^`]+)`/.exec(readme);
    expect(inProject, 'the quick start in a project').not.toBeNull();
    expect(global, 'the quick start after a global install').not.toBeNull();
    const expected = fs.readFileSync(path.join(GOLDEN, 'examples/cluster.nft'), 'utf8');
    const env = { ...npmEnv, npm_config_prefix: globalPrefix, PATH: `${path.join(globalPrefix, 'bin')}${path.delimiter}${process.env.PATH ?? ''}` };
    for (const [cwd, command, cmdEnv] of [
      [installed, inProject![1], npmEnv],
      [tmp, global![1], env],
    ] as const) {
      const r = spawnSync('sh', ['-c', command], { cwd, env: cmdEnv, encoding: 'utf8', maxBuffer: 1 << 26 });
      expect(r.stderr, command).toBe('');
      expect(r.status, command).toBe(0);
      expect(r.stdout, command).toBe(expected);
    }
  });

  it('has no dependencies: the bundle carries them', () => {
    expect(PACKAGE.dependencies ?? {}).toEqual({});
    const manifest = JSON.parse(fs.readFileSync(path.join(installedPackage, 'package.json'), 'utf8')) as { dependencies?: object };
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(fs.readdirSync(path.join(installed, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual([PACKAGE.name]);
  });

  it('installed, prints its version', () => {
    expect(npx(['--version'])).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
  });

  it('installed, compiles the example to its golden nftables ruleset and ovs bundle', () => {
    expect(fs.readFileSync(path.join(installedPackage, 'examples/cluster.yaml'), 'utf8')).toBe(fs.readFileSync(path.join(ROOT, 'examples/cluster.yaml'), 'utf8'));
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
    const bundle = path.join(installedPackage, 'dist/bundle');
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
    const r = npx(['diff', 'endpoint-moved.yaml', '--live', 'live.json', '--kube-proxy-version', '1.35']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(fs.readFileSync(path.join(GOLDEN, 'diff/endpoint-moved.diff.nft'), 'utf8'));
    expect(r.stdout).not.toBe('');
  });
});
