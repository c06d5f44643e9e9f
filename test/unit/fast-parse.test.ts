// The fast path must give exactly what the `yaml` package gives, or step aside: on
// fixtures, on generated snapshots in every style the yaml and JSON printers produce, and
// on random text built from YAML's awkward pieces. Positions of fast-read objects must be
// the ones the full parser reports.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcFullSize, fcParams, fcSize } from '../helpers/fc-runs.js';
import { parseAllDocuments, stringify } from 'yaml';
import { documentStarts, readFast } from '../../src/input/fast-parse.js';
import { fastJson } from '../../src/input/fast-json.js';
import { resolvePlain, resolvePlainAt } from '../../src/input/fast-yaml.js';
import { parseFiles, type FieldPath, type SourceObject } from '../../src/input/source.js';
import { ROOT } from '../helpers/kproxc.js';
import { rng } from '../helpers/random-cluster.js';
import { clusterObjects, makeCluster, renderSnapshot } from '../../scripts/gen-snapshot.mjs';

const generateObjects = (n: number, eps: number) => clusterObjects(makeCluster(n, { endpoints: eps, mixed: true }));

/** The yaml package's reading, document by document: each one's value, or undefined for one with an error. */
function reference(text: string): unknown[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false }) as unknown as {
    errors: unknown[];
    toJS(o: object): unknown;
  }[];
  return (Array.isArray(docs) ? docs : [docs]).map((d) => {
    if (d.errors.length > 0) return undefined;
    try {
      return d.toJS({ maxAliasCount: 100 });
    } catch {
      return undefined;
    }
  });
}

/**
 * Checks the fast reading of a text against the yaml package's, document by document and
 * as parseFiles gives it (values, order, diagnostics). Returns how many documents it read fast.
 */
function agrees(text: string, json = false): number {
  const ref = reference(text);
  const fast = readFast(text, json) ?? [];
  let read = 0;
  // Where the yaml package finds an error, which document it blames is its own affair;
  // parseFiles below must then read the whole file with the full parser.
  const clean = !ref.includes(undefined);
  fast.forEach((d, i) => {
    if (d.value === undefined) return;
    read++;
    if (clean && (fast.length !== ref.length || !isDeepStrictEqual(d.value, ref[i]))) {
      throw new Error(`document ${i} differs:\n${text}\nfast: ${JSON.stringify(d.value)}\nyaml: ${JSON.stringify(ref[i])}`);
    }
  });
  const name = json ? 'f.json' : 'f.yaml';
  const files = [{ name, text }];
  // Either both read the files alike, or both fail alike.
  const run = (fast: boolean) => {
    try {
      const r = parseFiles(files, { fast });
      return { diagnostics: r.diagnostics, objects: r.objects.map((o) => [o.order, o.value]) };
    } catch (e) {
      return { threw: String(e) };
    }
  };
  const [a, b] = [run(true), run(false)];
  if (!isDeepStrictEqual(a, b)) throw new Error(`parseFiles differs:\n${text}\nfast: ${JSON.stringify(a)}\nfull: ${JSON.stringify(b)}`);
  return read;
}

function allFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? allFiles(p) : /\.(ya?ml|json)$/.test(e.name) ? [p] : [];
  });
}

// The nft listings beside the diff fixtures (*.live.json) are JSON but not snapshots, and
// half the bytes; ovs/large-groups is a size test of the ovs backend, not of the reader. A
// quick run (FC_RUNS unset) reads every third one of the other snapshots.
const dataFiles = [...allFiles(path.join(ROOT, 'fixtures')), ...allFiles(path.join(ROOT, 'examples'))];
const fixtureFiles = fcFullSize()
  ? dataFiles
  : dataFiles.filter((f) => !f.endsWith('.live.json') && fs.statSync(f).size < 64 * 1024).filter((_, i) => i % 3 === 0);

describe('fast path values', () => {
  it('agree with the yaml package on every fixture, and read most of them', () => {
    let fastDocs = 0;
    for (const f of fixtureFiles) fastDocs += agrees(fs.readFileSync(f, 'utf8'), f.endsWith('.json'));
    expect(fastDocs).toBeGreaterThan(fcSize(300, 150));
  });

  it('agree on generated snapshots, as YAML and as JSON', () => {
    const objects = generateObjects(fcSize(60, 20), 4);
    for (const format of ['yaml', 'yaml-list', 'json', 'flow'] as const) {
      const text = renderSnapshot(objects, format);
      expect(agrees(text, format === 'json'), format).toBeGreaterThan(0);
    }
  });

  it('resolve plain scalars as the core schema does', () => {
    const cases = ['1', '-1', '+1', '007', '0o17', '0x1F', '0b1', '1_000', '1e3', '1E-3', '.5', '1.', '-.inf', '.NaN', '.nan', 'NaN',
      'true', 'True', 'TRUE', 'tRue', 'yes', 'no', 'on', 'null', 'Null', 'NULL', '~', 'nil', '10.0.0.1', 'fd00::1', '12345678901234567890',
      '-0', '0.0', '+.5', '1.5e+3', 'a', 'n', 'f', 't'];
    for (const c of cases) expect(Object.is(resolvePlain(c), (reference(`k: ${c}\n`)[0] as { k: unknown }).k), c).toBe(true);
  });

  it('resolve plain scalars in place (ports, booleans, addresses) as the core schema does', () => {
    const cases = ['0', '8080', '65535', '007', '000', '123456789012345', '1234567890123456', '99999999999999999999', '1.5', '1.', '1..2',
      '1.2.3', '10.128.0.1', '10.0.0.0/8', '192.168.0.2', '1e5', '1.5e-3', '0x1F', '0o17', '0b1', '12ab', '1-2', '1+2', '1_0', '1:2', '9f',
      '2001:db8::1', 'true', 'false', 'True', 'FALSE', 'trueish', 'fals', 'truex', 't', 'f', 'null', '~', '.5', '-1', '+7'];
    for (const c of cases) {
      const expected = (reference(`k: ${c}\n`)[0] as { k: unknown }).k;
      expect(Object.is(resolvePlain(c), expected), c).toBe(true);
      expect(Object.is(resolvePlainAt(`k: ${c} #`, 3, 3 + c.length), expected), c).toBe(true);
      // Again, from a remembered word where there is one.
      expect(Object.is(resolvePlainAt(`- ${c}`, 2, 2 + c.length), expected), c).toBe(true);
    }
    // Words of one length and hash that differ inside.
    for (const w of ['node-a1', 'node-b1', 'node-a1', 'nodeXa1', 'Null', 'nUll', 'Null']) {
      expect(resolvePlainAt(` ${w}:`, 1, 1 + w.length), w).toBe(w === 'Null' ? null : w);
    }
  });

  it('find directive and document end lines as the pattern does', () => {
    const pattern = /^(?:%|\.\.\.(?:[ \t\n]|$))/m;
    const refused = (t: string) => t.includes('\r') || pattern.test(t);
    const cases = ['%YAML 1.2\n---\na: 1\n', 'a: 1\n...\n', 'a: 1\n... \n', 'a: 1\n...\t', 'a: 1\n...', '...', '...x\n', 'a: 1\n....\n',
      'a: "%"\n', 'a: 1\n %x\n', 'a: 1\n%x', 'a: 1\u2028%x', 'a: 1\u2029...', 'a: 1\u2028...x', 'a: ...\n', '', '\n...\n...x', 'a\r\n'];
    for (const t of cases) expect(documentStarts(t) === null, JSON.stringify(t)).toBe(refused(t));
    const piece = fc.constantFrom('\n', '%', '.', '...', ' ', '\t', 'a', ': ', '\u2028', '\u2029', '---', '#');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const t = pieces.join('');
        expect(documentStarts(t) === null, JSON.stringify(t)).toBe(refused(t));
      }),
      fcParams(3000),
    );
  });

  // Values shaped like Kubernetes objects, with keys and scalars that need care.
  const key = fc.oneof(
    fc.constantFrom('name', 'app.kubernetes.io/name', 'a', 'b', 'x-y', 'true', '1', '1e3', 'null', 'a b', 'a:b', 'a#b', '-x', '__proto__',
      'constructor', 'é', '', ' ', '"', "'", '<<', '?', '|'),
    fc.string({ maxLength: 6 }),
  );
  const scalar = fc.oneof(
    fc.constantFrom('', ' ', 'a b', 'a #b', 'a: b', 'a:', ':a', '- a', '-', '#', '|', '>', '[a]', '{a: 1}', '@x', '`x', '%x', '!x', '&x', '*x',
      'fd00::1', '10.0.0.0/8', 'true', 'null', '~', '1', '0x1F', '1e3', '.inf', "it's", 'say "hi"', 'back\\slash', 'tab\there', 'line\nbreak',
      'multi\nline\ntext\n', '\u00e9t\u00e9', '\u2028', '\u0085', '\ufeff', 'x  ', '  x', '---', '...', 'a\r\nb'),
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
  );
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('arr'), tie('obj')),
    arr: fc.array(tie('node'), { maxLength: 4 }),
    obj: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  })).obj;

  const yamlOptions = fc.record({
    indent: fc.constantFrom(2, 4),
    indentSeq: fc.boolean(),
    flowCollectionPadding: fc.boolean(),
    lineWidth: fc.constantFrom(0, 20, 80),
    minContentWidth: fc.constantFrom(0, 20),
    defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
    defaultKeyType: fc.constantFrom(null, 'PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'),
    collectionStyle: fc.constantFrom('any', 'block', 'flow'),
  });

  it('agree on random values printed by the yaml package in every style', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 3 }), yamlOptions, (docs, opts) => {
        const text = docs.map((d) => stringify(d, opts as object)).join('---\n');
        agrees(text);
      }),
      fcParams(400),
    );
  });

  it('agree on random values printed as JSON', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(0, 2, 4), (v, space) => {
        agrees(JSON.stringify(v, null, space), true);
      }),
      fcParams(300),
    );
  });

  it('refuse JSON that YAML reads differently: a repeated key', () => {
    expect(fastJson('{"a": 1, "a": 2}')).toBeNull();
    expect(fastJson('{"a": {"b": 1, "c": {"b": 2, "b": 3}}}')).toBeNull();
    expect(fastJson('{"a": "x\\"", "b": "\\\\"}')?.value).toEqual({ a: 'x"', b: '\\' });
    expect(fastJson('{"a": "say \\"k\\": v"}')?.value).toEqual({ a: 'say "k": v' });
  });

  // Lines from YAML's awkward pieces, to catch the fast reader accepting or reading
  // differently what the yaml package refuses or reads otherwise.
  const pieces = fc.constantFrom(
    'a', 'b', 'name', '"q"', "'s'", 'a b', 'x.y/z', '1', 'true', 'null', '~', '-1', '0x1F', '1e3', '.5', 'fd00::1', '10.0.0.1',
    ': ', ':', '- ', '-', '#', ' #c', '#c', ' ', '  ', '    ', '|', '|-', '|+', '>', '>-', '|2', '[', ']', '{', '}', ',', ', ',
    '"', "'", "''", '\\', '\\n', '\\x41', '\\u00e9', '&a', '*a', '!t', '!!str', '%', '@', '`', '?', '---', '...', '\t', 'é', '\u2028',
  );
  const line = fc.tuple(fc.nat({ max: 6 }), fc.array(pieces, { maxLength: 6 })).map(([n, ps]) => ' '.repeat(n) + ps.join(''));
  const kubeLine = fc.tuple(
    fc.nat({ max: 3 }).map((n) => '  '.repeat(n)),
    fc.constantFrom('- ', '', '- a: ', 'key: ', 'key:', '-'),
    fc.oneof(pieces, fc.constantFrom('v', 'x y', '"s"', "'t'", '[a, b]', '{k: v}', '|', '|-', '', '# c')),
  ).map(([i, a, b]) => i + a + b);

  // Block YAML from a small grammar, with now and then an indentation off by one, a
  // piece of noise or an awkward scalar: mostly valid, sometimes not.
  function blockText(seed: number): string {
    const r = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    const scalars = ['v', 'a b', '10.0.0.1', 'fd00::1', '80', '-1', '0x1F', '1e3', '.5', 'true', 'null', '~', '', '"q"', "'s'", "'it''s'",
      '"a\\"b"', '"\\u00e9"', '"\\x41"', '[a, b]', '[]', '{}', '{k: v}', '{"k":1}', '[a, [b, {c: d}]]', 'a #c', 'a# c', 'a:b', 'x:', '&a v',
      '*a', '!t v', '|', '|-', '>', '- x', 'é', '[a,', '{a: 1, a: 2}', '"multi', "'", 'a  '];
    const keys = ['a', 'b', 'c', 'name', 'x.y/z', 'k-1', '"q"', "'s'", '1', 'true', 'a b', '__proto__', 'constructor', '?x', '"a\\"'];
    const jitter = () => (r() < 0.06 ? pick([-1, 1, 2]) : 0);
    const lines: string[] = [];
    const node = (indent: number, depth: number, inSeq: boolean): void => {
      const kind = depth > 3 ? 'scalar' : pick(['map', 'map', 'seq', 'scalar']);
      if (kind === 'scalar' || (inSeq && r() < 0.3)) {
        const v = pick(scalars);
        lines.push(' '.repeat(Math.max(0, indent + jitter())) + (inSeq ? '- ' : '') + v);
        if (v.startsWith('|') || v.startsWith('>')) for (let i = 0, n = Math.floor(r() * 3); i < n; i++) lines.push(' '.repeat(indent + 2 + jitter()) + pick(['text', '', '# not a comment', '  more']));
        return;
      }
      const n = 1 + Math.floor(r() * 3);
      for (let i = 0; i < n; i++) {
        const pad = ' '.repeat(Math.max(0, indent + jitter()));
        const lead = kind === 'seq' ? '- ' : '';
        if (kind === 'map' || r() < 0.5) {
          const k = pick(keys);
          if (r() < 0.5) lines.push(`${pad}${lead}${k}: ${pick(scalars)}`);
          else {
            lines.push(`${pad}${lead}${k}:`);
            const inner = indent + lead.length;
            node(r() < 0.3 ? inner : inner + pick([1, 2, 4]), depth + 1, r() < 0.4);
          }
        } else node(indent, depth + 1, true);
        if (r() < 0.05) lines.push(pick(['', '# comment', '  # indented comment', '---', '...', '\t', '%YAML 1.2']));
      }
    };
    for (let d = 0, docs = 1 + Math.floor(r() * 2); d < docs; d++) {
      if (d > 0) lines.push('---');
      node(0, 0, false);
    }
    return lines.join('\n') + (r() < 0.9 ? '\n' : '');
  }

  it('never read generated block YAML differently from the yaml package', () => {
    let fastTexts = 0;
    const params = fcParams(1500);
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        if (agrees(blockText(seed)) > 0) fastTexts++;
      }),
      params,
    );
    // At least a tenth of the texts must take the fast path, or the test proves little. About
    // a sixth do: of the hundred a quick run makes, a twentieth (a tenth falls short by
    // chance about one run in thirty).
    expect(fastTexts).toBeGreaterThan(params.numRuns / (params.numRuns < 1000 ? 20 : 10));
  });

  it('read a document the fast reader leaves as the yaml package does in its file: a tab-indented blank line before a ---', () => {
    // The yaml package refuses the tab before a `---` line, and not at the end of the text.
    for (const text of ['name: \n\t\n---\nb: 1\n', 'x.y/z:\n x.y/z: a  \nname: \n\t\n---\ntrue:\n- []\n', 'name: \n\t\n']) agrees(text);
    const r = parseFiles([{ name: 'f.yaml', text: 'name: \n\t\n---\nb: 1\n' }]);
    expect(r.diagnostics.map((d) => d.message)).toEqual(['invalid YAML: Tabs are not allowed as indentation']);
  });

  it('never read random text differently from the yaml package', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(line, kubeLine, kubeLine), { minLength: 1, maxLength: 12 }), fc.boolean(), (lines, nl) => {
        agrees(lines.join('\n') + (nl ? '\n' : ''));
      }),
      fcParams(1500),
    );
  });
});

/** Every path into a value, plus a missing key and index below each collection. */
function paths(v: unknown, prefix: FieldPath = [], out: FieldPath[] = []): FieldPath[] {
  out.push(prefix);
  if (Array.isArray(v)) {
    v.forEach((x, i) => paths(x, [...prefix, i], out));
    out.push([...prefix, v.length]);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
    out.push([...prefix, 'missing']);
  }
  return out;
}

function comparePositions(name: string, text: string): number {
  const fast = parseFiles([{ name, text }]);
  const slow = parseFiles([{ name, text }], { fast: false });
  expect(fast.diagnostics).toEqual(slow.diagnostics);
  expect(fast.objects.length).toBe(slow.objects.length);
  let compared = 0;
  fast.objects.forEach((o: SourceObject, i) => {
    const s = slow.objects[i];
    expect(o.order).toEqual(s.order);
    expect(isDeepStrictEqual(o.value, s.value)).toBe(true);
    const all = paths(o.value);
    // A sample of each object's paths keeps the run short; every kind of step is still met.
    const step = Math.max(1, Math.floor(all.length / 25));
    for (const p of all.filter((_, j) => j % step === 0 || j === all.length - 1)) {
      for (const opts of [undefined, { key: true }]) {
        const a = o.locate(p, opts);
        expect({ file: a.file, line: a.line, col: a.col }, `${name} ${JSON.stringify(p)} ${JSON.stringify(opts)}`).toEqual(s.locate(p, opts));
        compared++;
      }
    }
  });
  return compared;
}

describe('fast path positions', () => {
  it('are the full parser positions, on fixtures', () => {
    let n = 0;
    for (const f of fixtureFiles) n += comparePositions(f, fs.readFileSync(f, 'utf8'));
    expect(n).toBeGreaterThan(1000);
  });

  it('are the full parser positions, for documents and List items in YAML and JSON', () => {
    const objects = generateObjects(8, 3);
    for (const format of ['yaml', 'yaml-list', 'json', 'flow'] as const) {
      const name = format === 'json' ? 'snap.json' : 'snap.yaml';
      expect(comparePositions(name, renderSnapshot(objects, format))).toBeGreaterThan(100);
    }
    // An indented List and pretty-printed JSON.
    const list = { apiVersion: 'v1', kind: 'List', items: objects.slice(0, 4), metadata: { resourceVersion: '' } };
    expect(comparePositions('l.yaml', stringify(list, { indentSeq: true }))).toBeGreaterThan(50);
    expect(comparePositions('l.json', JSON.stringify(list, null, 4))).toBeGreaterThan(50);
  });

  it('leave a document the fast reader cannot read to the full parser, with the same positions', () => {
    const text = 'apiVersion: v1\nkind: Service # a comment\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n\n';
    expect(readFast(text, false)!.map((d) => d.value === undefined)).toEqual([true, false]);
    expect(comparePositions('mixed.yaml', text)).toBeGreaterThan(5);
  });

  it('leave a file with a syntax error wholly to the full parser', () => {
    const text = 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n---\nkind: [unclosed\n';
    const fast = parseFiles([{ name: 'bad.yaml', text }]);
    expect(fast.diagnostics).toEqual(parseFiles([{ name: 'bad.yaml', text }], { fast: false }).diagnostics);
    expect(fast.diagnostics.length).toBeGreaterThan(0);
  });
});
