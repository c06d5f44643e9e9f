// Imports point one way: cli -> compile -> {input, schema, check, model, backends} -> {nft, diag}.
// nft/ knows nothing of Kubernetes; diag/, net/ and io/ import nothing of ours.
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
  input: ['diag'],
  schema: ['diag', 'input'],
  check: ['diag', 'input', 'net', 'schema'],
  model: ['diag', 'input', 'net', 'schema', 'check'],
  backends: ['diag', 'net', 'nft', 'model', 'io'],
};

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
        const text = fs.readFileSync(file, 'utf8');
        for (const m of text.matchAll(/from '(\.[^']+)'/g)) {
          const target = path.relative(SRC, path.resolve(path.dirname(file), m[1]));
          const top = target.split(path.sep)[0];
          if (top !== folder && !may.includes(top)) bad.push(`${path.relative(SRC, file)} -> ${target}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});
