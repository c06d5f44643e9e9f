// loadModel reads, checks and decodes each object as soon as its document is read; the
// result must be the one of doing each stage over all objects in turn: the same objects,
// diagnostics in the same order, the same model. A file that needs the full parser part
// way through sends the whole load back to the staged path.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadModel } from '../../src/compile.js';
import { UserInputError, type Diagnostic } from '../../src/diag/diagnostic.js';
import { parseFiles, streamFiles, type InputFile, type SourceObject } from '../../src/input/source.js';
import { buildModel } from '../../src/model/build.js';
import { decodeAll } from '../../src/model/decode.js';
import { validateObjects } from '../../src/schema/validate.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { clusterObjects, makeCluster, renderSnapshot } from '../../scripts/gen-snapshot.mjs';

function snapshotFiles(dir: string): InputFile[] {
  return fs
    .readdirSync(dir)
    .filter((n) => /\.(ya?ml|json)$/.test(n))
    .map((n) => ({ name: path.join(dir, n), text: fs.readFileSync(path.join(dir, n), 'utf8') }));
}

const plain = (ds: Diagnostic[]) => ds.map((d) => ({ ...d, pos: { file: d.pos.file, line: d.pos.line, col: d.pos.col } }));
const objectsOf = (os: SourceObject[]) => os.map((o) => [o.file, o.order, o.value]);

/** What loadModel gave before it streamed: every stage over every object in turn. */
function staged(files: InputFile[]): { diagnostics: Diagnostic[]; families?: unknown } {
  const diags: Diagnostic[] = [];
  const parsed = parseFiles(files);
  diags.push(...parsed.diagnostics);
  const validated = validateObjects(parsed.objects);
  diags.push(...validated.diagnostics);
  const decoded = decodeAll(validated.typed, diags);
  const parseFailed = parsed.diagnostics.some((d) => d.severity === 'error');
  const built = parseFailed ? null : buildModel(decoded, {}, files, diags);
  // As loadModel reports them: the errors if there are any, else everything.
  const errors = diags.filter((d) => d.severity === 'error');
  if (errors.length > 0 || !built) return { diagnostics: plain(errors.length ? errors : diags) };
  return { diagnostics: plain(diags), families: built.families };
}

function loaded(files: InputFile[]): { diagnostics: Diagnostic[]; families?: unknown } {
  try {
    const m = loadModel(files, {});
    return { diagnostics: plain(m.warnings), families: m.families };
  } catch (e) {
    if (!(e instanceof UserInputError)) throw e;
    return { diagnostics: plain(e.diagnostics) };
  }
}

describe('streaming load', () => {
  const cases: InputFile[][] = [
    ...snapshotFiles(FIXTURES).map((f) => [f]),
    ...snapshotFiles(path.join(FIXTURES, '_error_')).map((f) => [f]),
    snapshotFiles(path.join(FIXTURES, '_error_')),
  ];

  it('hands over what parseFiles reads, or gives up for parseFiles to read it', () => {
    let streamed = 0;
    for (const files of cases) {
      const handed: SourceObject[] = [];
      const diagnostics = streamFiles(files, (o) => handed.push(o));
      if (diagnostics === null) continue;
      streamed++;
      const whole = parseFiles(files);
      expect(objectsOf(handed)).toEqual(objectsOf(whole.objects));
      expect(plain(diagnostics)).toEqual(plain(whole.diagnostics));
    }
    expect(streamed).toBeGreaterThan(cases.length / 2);
  });

  it('gives up when a later document of a file needs the full parser', () => {
    const good = 'apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n';
    const files = [{ name: 'f.yaml', text: `${good}---\n${good.replace('name: a', 'name: b')}---\nkind: [unclosed\n` }];
    const handed: SourceObject[] = [];
    expect(streamFiles(files, (o) => handed.push(o))).toBeNull();
    expect(handed.length).toBe(2);
    expect(loaded(files)).toEqual(staged(files));
  });

  it('reads a file that is all for the full parser without giving up', () => {
    const text = 'apiVersion: v1\r\nkind: Node\r\nmetadata:\r\n  name: a\r\n';
    const handed: SourceObject[] = [];
    expect(streamFiles([{ name: 'crlf.yaml', text }], (o) => handed.push(o))).toEqual([]);
    expect(handed.map((o) => o.value)).toEqual([{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' } }]);
  });

  it('gives loadModel the model and diagnostics of the staged stages', () => {
    for (const files of cases) {
      const a = loaded(files);
      const b = staged(files);
      if (!isDeepStrictEqual(a, b)) expect(a, files.map((f) => f.name).join(', ')).toEqual(b);
    }
  });

  it('gives the staged model for a generated snapshot in every form', () => {
    const objects = clusterObjects(makeCluster(40, { endpoints: 3, mixed: true }));
    for (const format of ['yaml', 'yaml-list', 'json'] as const) {
      const files = [{ name: format === 'json' ? 'snap.json' : 'snap.yaml', text: renderSnapshot(objects, format) }];
      expect(loaded(files), format).toEqual(staged(files));
    }
  });
});
