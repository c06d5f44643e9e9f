// Every built module loads when it is the first of ours to be loaded. A runtime import cycle
// hides from every other test: whichever module of the cycle is entered first is evaluated
// last, after the modules it imports, so one of those reads its exports before they are made
// (a ReferenceError, or undefined). The CLI and the tests enter the cycle where it happens to
// work; a library user, or a new import elsewhere, may not. So each module of dist/ is loaded
// alone, in a module graph of its own (test/helpers/load-alone.mjs), in fresh processes.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/kproxc.js';

const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
// esbuild's output: chunks that only its entries load, in the order esbuild gives them.
const BUNDLE = path.join(DIST, 'bundle');
const LOADER = path.join(ROOT, 'test/helpers/load-alone.mjs');

function filesUnder(dir: string, ext: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return p === BUNDLE ? [] : filesUnder(p, ext);
    return p.endsWith(ext) ? [p] : [];
  });
}

const sourceOf = (js: string) => path.join(SRC, path.relative(DIST, js)).replace(/\.js$/, '.ts');
const builtOf = (ts: string) => path.join(DIST, path.relative(SRC, ts)).replace(/\.ts$/, '.js');

/** Runs the loader over some modules in a process of its own; what each that failed threw. */
function loadEachAlone(files: string[], concurrency: number): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const urls = files.map((f) => pathToFileURL(f).href);
    // NODE_OPTIONS could carry the test runner's own loader hooks into the child.
    const child = spawn(process.execPath, [LOADER, String(concurrency), ...urls], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`the loader exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, string>);
    });
  });
}

/** The error's first line and where it was thrown, with paths from the repository's root. */
function briefly(error: string): string {
  const lines = error.split('\n');
  const at = lines.find((l) => /^\s+at /.test(l));
  const text = [lines[0], at?.trim()].filter(Boolean).join(' ');
  return text.split(pathToFileURL(ROOT).href + '/').join('').split(ROOT + path.sep).join('');
}

/**
 * The modules tsc built from src/. A module left in dist/ by a source since removed is not
 * one (tsc -b leaves its output behind); a source with no module means dist/ is older than
 * src/, and fails the test.
 */
function builtModules(): string[] {
  const sources = filesUnder(SRC, '.ts').filter((f) => !f.endsWith('.test.ts') && !f.endsWith('.d.ts'));
  expect(sources.filter((ts) => !fs.existsSync(builtOf(ts))).map((ts) => path.relative(ROOT, ts)), 'not built: run npm run build').toEqual([]);
  const modules = filesUnder(DIST, '.js').filter((js) => fs.existsSync(sourceOf(js)));
  expect(modules.length).toBe(sources.length);
  return modules;
}

/** The modules of ours a built module imports statically (tsc has erased the type-only imports). */
function staticImports(js: string): string[] {
  const text = fs.readFileSync(js, 'utf8');
  const from = [...text.matchAll(/^(?:import|export)\b[^;'"]*?\bfrom\s*'(\.[^']+)'/gm), ...text.matchAll(/^import\s*'(\.[^']+)'/gm)];
  return from.map((m) => path.resolve(path.dirname(js), m[1]));
}

/** The strongly connected components of more than one module, or of one importing itself (Tarjan). */
function importCycles(modules: string[]): string[][] {
  const edges = new Map(modules.map((m) => [m, staticImports(m)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (m: string): void => {
    index.set(m, index.size);
    low.set(m, index.get(m)!);
    stack.push(m);
    for (const n of edges.get(m) ?? []) {
      if (!index.has(n)) {
        visit(n);
        low.set(m, Math.min(low.get(m)!, low.get(n)!));
      } else if (stack.includes(n)) low.set(m, Math.min(low.get(m)!, index.get(n)!));
    }
    if (low.get(m) !== index.get(m)) return;
    const component = stack.splice(stack.indexOf(m));
    if (component.length > 1 || edges.get(m)!.includes(m)) cycles.push(component.map((c) => path.relative(DIST, c)).sort());
  };
  for (const m of modules) if (!index.has(m)) visit(m);
  return cycles;
}

describe('module loading', () => {
  it('no module imports itself back through others', () => {
    // What the next test finds when a cycle throws, found here whether it throws or not (a
    // cycle whose imports are only used inside functions loads, until someone uses one at
    // the top of a module): named as the modules of each cycle.
    expect(importCycles(builtModules())).toEqual([]);
  });

  it('every module in dist/ loads first and alone', async () => {
    const modules = builtModules();
    // A process per core (up to 8), each loading its share two at a time: some 3 s for 160
    // modules on 2 cores. Workers in one process scale worse (on 2 cores, one process
    // loading four at a time took twice as long), and one process per module, 7 s.
    const processes = Math.min(os.availableParallelism(), 8);
    const shares = Array.from({ length: processes }, (_, i) => modules.filter((_, j) => j % processes === i));
    const failed = Object.assign({}, ...(await Promise.all(shares.map((s) => loadEachAlone(s, 2))))) as Record<string, string>;

    const named = Object.entries(failed).map(([url, error]) => `${path.relative(DIST, fileURLToPath(url))}: ${briefly(error)}`);
    expect(named.sort()).toEqual([]);
  });
});
