// Bundles the compiled CLI (dist/, made by tsc) into a few files under dist/bundle, which
// bin/kproxc runs. Node 20 loads each ES module of its own (resolving, reading, linking):
// the sixty-odd modules of a compile cost some 40 ms of every run, more than a small
// snapshot's whole compile. The lazily loaded commands (diff, trace, the ovs backend)
// stay chunks of their own, loaded when they run; the diff's listing worker is an entry
// of its own, next to the chunks, where live/compact/start.ts looks for it. The yaml package stays
// outside: it is loaded only when the full parser is needed (src/input/yaml-lib.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist/bundle');

fs.rmSync(OUT, { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: { kproxc: 'dist/cli/bin.js', 'live-worker': 'dist/live/compact/live-worker.js' },
  outdir: OUT,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['yaml'],
  // commander is CommonJS and requires Node's modules: an ES module has no `require` of
  // its own, so each file gets one.
  banner: { js: "import { createRequire as kproxcRequire } from 'node:module'; const require = kproxcRequire(import.meta.url);" },
  logLevel: 'warning',
});
