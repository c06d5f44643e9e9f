// Imports point one way: cli -> compile -> {input, schema, check, model, backends} -> {nft, ovs, diag},
// and cli -> diff -> live -> nft for the diff. nft/ and ovs/ know nothing of Kubernetes, of
// live listings or of the diffs; diag/, net/ and io/ import nothing of ours; only cli/
// imports live/ and diff/ from outside them (docs/architecture.md).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
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
};

// The folders only the command line may import from outside them.
const onlyCli = ['live', 'diff'];

/** The top folder (or file, for src/*.ts) of each relative import of a file. */
function importedTops(file: string): { target: string; top: string }[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => {
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

  it(`only cli/ imports ${onlyCli.join(' and ')} from outside them`, () => {
    const bad: string[] = [];
    for (const file of filesUnder(SRC)) {
      const from = path.relative(SRC, file).split(path.sep)[0];
      if (from === 'cli' || onlyCli.includes(from)) continue;
      for (const { target, top } of importedTops(file)) if (onlyCli.includes(top)) bad.push(`${path.relative(SRC, file)} -> ${target}`);
    }
    expect(bad).toEqual([]);
  });
});
