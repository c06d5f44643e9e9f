// Imports point one way: cli -> compile -> {input, schema, check, model, backends} -> {nft, ovs, diag},
// cli -> diff -> live -> nft for the diff, cli -> conntrack -> {backends, ovs, live} for its
// clean-up, and cli -> trace -> compile for a packet's walk. nft/ and ovs/ know nothing of
// Kubernetes, of live listings or of the diffs; diag/, net/ and io/ import nothing of ours;
// only cli/ imports diff/, and only cli/, diff/ and conntrack/ import live/
// (docs/architecture.md). src/compile.ts and src/compile-ovs.ts are named by their file,
// `compile` and `compile-ovs`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { ROOT } from '../helpers/kproxc.js';

const SRC = path.join(ROOT, 'src');
const allowed: Record<string, string[]> = {
  diag: [],
  net: [],
  io: [],
  nft: ['diag', 'net', 'io'],
  ovs: ['diag', 'net'],
  live: ['nft', 'diag', 'net', 'io'],
  diff: ['nft', 'ovs', 'live', 'diag', 'net'],
  input: ['diag'],
  schema: ['diag', 'input'],
  check: ['diag', 'input', 'net', 'schema'],
  model: ['diag', 'input', 'net', 'schema', 'check'],
  backends: ['diag', 'net', 'nft', 'ovs', 'model', 'io'],
  conntrack: ['model', 'backends', 'live', 'nft', 'ovs', 'net', 'diag'],
  trace: ['diag', 'net', 'input', 'check', 'model', 'backends', 'nft', 'ovs', 'compile'],
  cli: ['diag', 'net', 'input', 'model', 'backends', 'nft', 'ovs', 'live', 'diff', 'conntrack', 'trace', 'compile', 'compile-ovs'],
};

// The folders only a few others may import: reading live state and diffing against it are
// the work of `kproxc diff`, which the command line runs, and which the conntrack clean-up
// reads live state for.
const importedOnlyBy: Record<string, string[]> = {
  live: ['cli', 'diff', 'conntrack'],
  diff: ['cli'],
};

/** The top folder (or file, for src/*.ts) of each relative import of a file, static or `import()`. */
function importedTops(file: string): { target: string; top: string }[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from |import\()'(\.[^']+)'/g)].map((m) => {
    const target = path.relative(SRC, path.resolve(path.dirname(file), m[1]));
    return { target, top: target.split(path.sep)[0].replace(/\.js$/, '') };
  });
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? filesUnder(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('module boundaries', () => {
  for (const [folder, may] of Object.entries(allowed)) {
    it(`${folder}/ imports only ${may.join(', ') || 'nothing of ours'}`, () => {
      const bad: string[] = [];
      for (const file of filesUnder(path.join(SRC, folder))) {
        for (const { target, top } of importedTops(file)) {
          if (top !== folder && !may.includes(top)) bad.push(`${path.relative(SRC, file)} -> ${target}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }

  for (const [folder, by] of Object.entries(importedOnlyBy)) {
    it(`only ${by.join(', ')} import ${folder}/ from outside it`, () => {
      const bad: string[] = [];
      for (const file of filesUnder(SRC)) {
        const from = path.relative(SRC, file).split(path.sep)[0];
        if (from === folder || by.includes(from)) continue;
        for (const { target, top } of importedTops(file)) if (top === folder) bad.push(`${path.relative(SRC, file)} -> ${target}`);
      }
      expect(bad).toEqual([]);
    });
  }
});

// Small modules with one job, and no function that grows into a syncProxyRules: every
// source file fits in 450 lines and every function in 80 (generated code aside).
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 80;

describe('sizes', () => {
  const sources = filesUnder(SRC).filter((f) => !f.endsWith('.generated.ts'));

  it(`no source file is over ${MAX_FILE_LINES} lines`, () => {
    const long = sources.map((f) => [path.relative(SRC, f), fs.readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`no function is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of sources) {
      const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isFunctionLike(n) && 'body' in n && n.body) {
          const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
          const last = sf.getLineAndCharacterOfPosition(n.end).line;
          if (last - first + 1 > MAX_FUNCTION_LINES) long.push(`${path.relative(SRC, file)}:${first + 1} (${last - first + 1} lines)`);
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    expect(long).toEqual([]);
  });
});
