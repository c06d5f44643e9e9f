// Golden cases: fixtures/<case>.yaml with optional `# kproxc-args: ...` header lines,
// compiled and compared with golden/<case>.<ext> (each nftables layout but the default in
// a folder of its own, GOLDEN_DIRS). UPDATE_GOLDEN=1 rewrites; a normal run never writes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { DEFAULT_LAYOUT, type TableKind } from '../../src/backends/nftables/layout.js';
import { decodeText } from '../../src/input/encoding.js';
import { parseFiles } from '../../src/input/source.js';
import { ROOT } from './kproxc.js';

export const FIXTURES = path.join(ROOT, 'fixtures');
export const GOLDEN = path.join(ROOT, 'golden');
export const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** Where each layout's golden files are, under GOLDEN: kube-proxy's (the default) at the top. */
export const GOLDEN_DIRS: Record<string, string> = {
  // kube-proxy 1.35's goldens stand at the top: they were the only ones before releases differed.
  'kube-proxy-1.35': '',
  'kube-proxy-1.36': 'kube-proxy-1.36',
  'kube-proxy-1.37': 'kube-proxy-1.37',
  'fast-load': 'fast-load',
};

/** A golden file of a kind of table, relative to GOLDEN: `<dir>/<case>.<ext>`. */
export function kindGolden(kind: TableKind, name: string, ext: 'nft' | 'json'): string {
  const dir = GOLDEN_DIRS[kind.name];
  if (dir === undefined) throw new Error(`no golden folder for ${kind.name}: add it to GOLDEN_DIRS`);
  return path.join(dir, `${name}.${ext}`);
}

/** The command-line flags that compile a table of `kind`. */
export function kindArgs(kind: TableKind): string[] {
  return [...(kind.layout === DEFAULT_LAYOUT ? [] : ['--layout', kind.layout]), '--kube-proxy-version', kind.version];
}

/**
 * `compile --format json`'s output as its golden file holds it: the same JSON with each
 * command on a line of its own, so that a change shows as the commands it changes. The
 * output is the compact form of it (jsonFromGolden), byte for byte, and nft loads either.
 */
export function jsonGoldenForm(output: string): string {
  const doc = JSON.parse(output) as { nftables: unknown[] };
  if (Object.keys(doc).join() !== 'nftables') throw new Error('not an nftables JSON document');
  return `{"nftables": [\n${doc.nftables.map((c) => JSON.stringify(c)).join(',\n')}\n]}\n`;
}

/** The output a JSON golden file stands for: its compact form, as kproxc prints it. */
export function jsonFromGolden(golden: string): string {
  return `${JSON.stringify(JSON.parse(golden))}\n`;
}

export interface Fixture {
  name: string;
  file: string;
  args: string[];
  text: string;
}

export function fixtureArgs(text: string): string[] {
  const args: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^#\s*kproxc-args:\s*(.*)$/.exec(line);
    if (m) args.push(...m[1].trim().split(/\s+/).filter(Boolean));
  }
  return args;
}

/** A fixture's text, decoded as kproxc decodes its input (some fixtures are UTF-16, or have a byte-order mark). */
export function fixtureText(file: string): string {
  const read = decodeText(fs.readFileSync(file));
  // An error fixture may hold what is not text at all; it is only ever read by kproxc itself.
  return 'text' in read ? read.text : '';
}

/**
 * `withJson`: also *.json snapshots (the shared fixtures and the error fixtures; JSON has
 * no comments, so no kproxc-args).
 */
export function listFixtures(dir = FIXTURES, withJson = dir === FIXTURES): Fixture[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.yaml') || (withJson && n.endsWith('.json')))
    .sort()
    .map((n) => {
      const file = path.join(dir, n);
      const text = fixtureText(file);
      return { name: n.replace(/\.(yaml|json)$/, ''), file, args: fixtureArgs(text), text };
    });
}

/** Compares with the golden file, or writes it under UPDATE_GOLDEN=1. Returns the expected text. */
export function golden(rel: string, actual: string): string {
  const file = path.join(GOLDEN, rel);
  if (UPDATE) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== actual) fs.writeFileSync(file, actual);
    return actual;
  }
  if (!fs.existsSync(file)) throw new Error(`golden file ${rel} is missing; run UPDATE_GOLDEN=1 npm test and review it`);
  return fs.readFileSync(file, 'utf8');
}

/**
 * Deterministic shuffle (xorshift) of every object of a snapshot, as kproxc reads them:
 * lists flattened, JSON streams cut, a kube-proxy ConfigMap read as its configuration.
 */
export function shuffledSnapshot(text: string, seed: number): string {
  const objects: unknown[] = parseFiles([{ name: 'snapshot.yaml', text }]).objects.map((o) => o.value);
  let s = seed >>> 0 || 1;
  const rnd = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  for (let i = objects.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [objects[i], objects[j]] = [objects[j], objects[i]];
  }
  return objects.map((o) => stringify(o)).join('---\n');
}

/** Golden standard error: a missing file means no diagnostics. */
export function goldenStderr(rel: string, actual: string): string {
  if (actual === '' && !fs.existsSync(path.join(GOLDEN, rel))) return '';
  if (UPDATE && actual === '') {
    fs.rmSync(path.join(GOLDEN, rel), { force: true });
    return '';
  }
  return golden(rel, actual);
}
