// What a failed run leaves behind: exit 2 and nothing on standard output for bad input,
// an -o file untouched (and no temporary file) unless the run succeeds, warnings that
// fail only under --strict, and exit 70 with one line (no stack trace) for our own bugs.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { DIFF_FIXTURES } from '../helpers/diff-cases.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { kproxc, kproxcProcess, ROOT } from '../helpers/kproxc.js';

const GOOD = path.join(FIXTURES, 'clusterip.yaml');
const BAD = path.join(FIXTURES, '_error_', 'bad-ip.yaml');

const UNKNOWN_KIND = `apiVersion: v1
kind: Node
metadata: {name: test-node}
---
apiVersion: apps/v1
kind: Deployment
metadata: {namespace: ns1, name: web}
`;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-inp-out-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const leftovers = () => fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'));

describe('-o FILE', () => {
  it('a failed run leaves an existing file untouched and no temporary file', async () => {
    const out = path.join(dir, 'ruleset.nft');
    fs.writeFileSync(out, 'the old ruleset\n');
    const r = await kproxc(['compile', BAD, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/bad-ip\.yaml:\d+:\d+: /);
    expect(fs.readFileSync(out, 'utf8')).toBe('the old ruleset\n');
    expect(leftovers()).toEqual([]);
  });

  it('the same holds for the real process', () => {
    const out = path.join(dir, 'ruleset.nft');
    fs.writeFileSync(out, 'the old ruleset\n');
    const r = kproxcProcess(['compile', BAD, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(fs.readFileSync(out, 'utf8')).toBe('the old ruleset\n');
    expect(leftovers()).toEqual([]);
  });

  it('a successful run replaces the file with exactly what standard output would get, keeping its mode', async () => {
    const out = path.join(dir, 'ruleset.nft');
    fs.writeFileSync(out, 'the old ruleset\n', { mode: 0o600 });
    const r = await kproxc(['compile', GOOD, '-o', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const printed = await kproxc(['compile', GOOD]);
    expect(fs.readFileSync(out, 'utf8')).toBe(printed.stdout);
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(leftovers()).toEqual([]);
  });

  it('a missing folder is a user error (exit 2) that names the folder, not a raw errno', async () => {
    const missing = path.join(dir, 'missing', 'deeper');
    const out = path.join(missing, 'ruleset.nft');
    const r = await kproxc(['compile', GOOD, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`kproxc: -o ${out}: cannot write: folder ${missing} does not exist\n`);
    // The real process says the same, relative names as given.
    const rel = kproxcProcess(['compile', GOOD, '-o', path.relative(ROOT, out)]);
    expect(rel.code).toBe(2);
    expect(rel.stderr).toBe(`kproxc: -o ${path.relative(ROOT, out)}: cannot write: folder ${path.relative(ROOT, missing)} does not exist\n`);
  });

  it('the other files a run writes name their own flag when their folder is missing', async () => {
    const snapshot = path.join(DIFF_FIXTURES, 'endpoint-moved.yaml');
    const live = path.join(DIFF_FIXTURES, 'endpoint-moved.live.json');
    const missing = path.join(dir, 'missing');
    for (const flag of ['--conntrack', '--two-phase']) {
      const file = path.join(missing, 'out');
      const r = await kproxc(['diff', snapshot, '--live', live, flag, file]);
      expect(r.code, flag).toBe(2);
      expect(r.stderr).toBe(`kproxc: ${flag} ${file}: cannot write: folder ${missing} does not exist\n`);
      // Checked before anything is written: no transaction on standard output, no -o file.
      expect(r.stdout, flag).toBe('');
      const out = path.join(dir, 'tx.nft');
      const withOutput = await kproxc(['diff', snapshot, '--live', live, '-o', out, flag, file]);
      expect(withOutput.code, flag).toBe(2);
      expect(fs.existsSync(out), flag).toBe(false);
    }
  });

  it('through a symbolic link, the file it names is replaced and the link stays', async () => {
    const real = path.join(dir, 'real.nft');
    const link = path.join(dir, 'link.nft');
    fs.writeFileSync(real, 'old\n');
    fs.symlinkSync(real, link);
    const r = await kproxc(['compile', GOOD, '-o', link]);
    expect(r.code).toBe(0);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toMatch(/^add table ip kube-proxy\n/);
    expect(leftovers()).toEqual([]);
  });

  it('a pipe (or device, as -o /dev/stdout) is written to, never replaced by a file', () => {
    const fifo = path.join(dir, 'fifo');
    const got = path.join(dir, 'got');
    // The reader gives up after 20 s, so a regression (the pipe replaced) fails instead of hanging.
    const script = `mkfifo ${fifo} && (timeout 20 cat ${fifo} > ${got} &) ; node bin/kproxc compile ${GOOD} -o ${fifo}`;
    const r = spawnSync('sh', ['-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
    expect(fs.readFileSync(got, 'utf8')).toMatch(/^add table ip kube-proxy\n/);
    expect(leftovers()).toEqual([]);
  });

  it('a directory in the way is refused and stays as it was', async () => {
    const out = path.join(dir, 'ruleset.nft');
    fs.mkdirSync(out);
    const r = await kproxc(['compile', GOOD, '-o', out]);
    expect(r.code).toBe(2);
    expect(fs.statSync(out).isDirectory()).toBe(true);
    expect(leftovers()).toEqual([]);
  });
});

describe('warnings and --strict', () => {
  it('a warning goes to standard error and the run succeeds', async () => {
    const r = await kproxc(['compile', '-'], UNKNOWN_KIND);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^add table ip kube-proxy\n/);
    expect(r.stderr).toBe('<stdin>:5:1: Deployment ns1/web: warning: apps/v1 Deployment is not read by kproxc; skipped\n');
  });

  it('--strict turns it into an error: exit 2, nothing on standard output', async () => {
    const r = await kproxc(['compile', '-', '--strict'], UNKNOWN_KIND);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('<stdin>:5:1: Deployment ns1/web: apps/v1 Deployment is not read by kproxc; skipped\n');
  });

  it('--strict also fails on warnings of the backend (an element two Services claim)', async () => {
    const slice = (svc: string) => `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: ns1, name: ${svc}-a, labels: {kubernetes.io/service-name: ${svc}}}
addressType: IPv4
endpoints: [{addresses: [10.180.0.1]}]
ports: [{name: "", port: 80}]
`;
    const clash = `apiVersion: v1
kind: Node
metadata: {name: test-node}
---
apiVersion: v1
kind: Service
metadata: {namespace: ns1, name: a}
spec: {type: NodePort, clusterIP: 172.30.0.1, ports: [{port: 80, nodePort: 30080}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: ns1, name: b}
spec: {type: NodePort, clusterIP: 172.30.0.2, ports: [{port: 80, nodePort: 30080}]}
${slice('a')}${slice('b')}`;
    const lax = await kproxc(['compile', '-'], clash);
    expect(lax.code).toBe(0);
    expect(lax.stderr).toMatch(/^<stdin>:12:\d+: Service ns1\/b: warning: NodePort TCP 30080 \(IPv4\) is also the NodePort of ns1\/a:80\/TCP, which comes first in name order and serves it; ns1\/b:80\/TCP gets no rule for it\n$/);
    const strict = await kproxc(['compile', '-', '--strict'], clash);
    expect(strict.code).toBe(2);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).not.toMatch(/warning:/);
  });
});

describe('a Service that was never applied (no spec.clusterIP)', () => {
  /** Every `kubectl get services,...` dump command in a text. */
  const dumpCommands = (text: string) => [...text.matchAll(/kubectl get services,[\w,]+ -A -o yaml/g)].map((m) => m[0]);

  it('is left out with a warning that gives the same dump command as the README, the docs and --help', async () => {
    const readme = dumpCommands(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(readme.length).toBeGreaterThan(0);
    const [command] = readme;
    expect(command).toContain('servicecidrs');
    const docs = fs.readdirSync(path.join(ROOT, 'docs')).flatMap((f) => dumpCommands(fs.readFileSync(path.join(ROOT, 'docs', f), 'utf8')));
    const help = dumpCommands((await kproxc(['compile', '--help'])).stdout);
    expect(help.length).toBeGreaterThan(0);
    expect(new Set([...readme, ...docs, ...help])).toEqual(new Set([command]));

    const r = await kproxc(['compile', path.join(FIXTURES, 'unapplied-service.yaml')]);
    expect(r.code).toBe(0);
    const warnings = r.stderr.trimEnd().split('\n');
    expect(warnings).toHaveLength(3);
    for (const w of warnings) {
      expect(w).toContain('spec.clusterIP: warning: missing:');
      expect(dumpCommands(w)).toEqual([command]);
      expect(w.endsWith(command)).toBe(true);
    }
  });
});

describe('internal errors (our bugs)', () => {
  /** The CLI in-process, with a command `boom` that fails as a bug would. */
  const boom = async (fail: () => void, args: string[] = []) => {
    let stdout = '';
    let stderr = '';
    const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s), readStdin: () => Buffer.alloc(0) };
    const code = await run(['boom', ...args], io, (program) => program.command('boom').option('--debug').action(fail));
    return { code, stdout, stderr };
  };

  it('print one line asking for a report and exit 70', async () => {
    const r = await boom(() => {
      (null as unknown as { x: number }).x;
      throw new Error('unreachable');
    });
    expect(r.code).toBe(70);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^kproxc: internal error \(a bug in kproxc; please report it with the input that caused it\): TypeError: .*\n$/);
    expect(r.stderr.split('\n')).toHaveLength(2);
  });

  it('--debug shows the stack trace', async () => {
    const r = await boom(() => {
      throw new RangeError('deep\ninside');
    }, ['--debug']);
    expect(r.code).toBe(70);
    expect(r.stderr).toMatch(/^RangeError: deep\ninside\n\s+at /);
    expect(r.stderr).toMatch(/\nkproxc: internal error \(a bug in kproxc; please report it with the input that caused it\): RangeError: deep inside\n$/);
  });

  // The real entry point, with a command that fails (bin.ts is what users run).
  const withFailingCommand = (how: string, args: string[]) => {
    const script = `
      const { runProcess } = await import('./dist/cli/process.js');
      runProcess(process.argv.slice(2), (program) => program.command('boom').option('--debug').action(() => { ${how} }));`;
    return spawnSync(process.execPath, ['--input-type=module', '-e', script, 'argv0', 'boom', ...args], { cwd: ROOT, encoding: 'utf8' });
  };

  it('exit 70 and one line from the real process, for a thrown error and an asynchronous one', () => {
    for (const how of ['null.x;', "setTimeout(() => { throw new Error('later'); }, 0);"]) {
      const r = withFailingCommand(how, []);
      expect(r.status, how).toBe(70);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^kproxc: internal error \(a bug in kproxc; please report it with the input that caused it\): (TypeError|Error): .*\n$/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const debug = withFailingCommand('null.x;', ['--debug']);
    expect(debug.status).toBe(70);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});

describe('standard input and unreadable files', () => {
  it('a missing file and a directory without snapshots are reported, each at its name', async () => {
    const empty = fs.mkdtempSync(path.join(dir, 'empty-'));
    const r = await kproxc(['compile', path.join(dir, 'nope.yaml'), empty]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${empty}:1:1: directory holds no *.yaml, *.yml or *.json file\n${path.join(dir, 'nope.yaml')}:1:1: no such file or directory\n`);
  });

  it('kproxc compile FILE | head: a reader that goes away ends the run quietly', () => {
    const r = spawnSync('sh', ['-c', `node bin/kproxc compile ${GOOD} | head -c 10 >/dev/null`], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});
