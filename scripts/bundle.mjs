// Bundles the compiled CLI (dist/, made by tsc) into dist/bundle, which bin/kproxc runs and
// which is all the npm package carries: it needs nothing from node_modules at run time.
// Node 20 loads each ES module of its own (resolving, reading, linking): the sixty-odd
// modules of a compile cost some 40 ms of every run, more than a small snapshot's whole
// compile. So:
// - the lazily loaded modules (diff's and trace's run modules, the ovs backend) stay chunks of
//   their own, loaded when they run;
// - a file the code starts by its URL (`new URL('./x.js', import.meta.url)`: the diff's
//   listing worker) is an entry of its own, next to the chunks, where that URL points;
// - a package loaded on first use with `createRequire(import.meta.url)('pkg')` (yaml: the
//   full parser, which costs some 40 ms to load and most snapshots never need) is bundled
//   into pkg.cjs beside the chunks, and the call made to load that file instead;
// - the package's version is written in, so --version reads no package.json.
// The build fails if any output still imports something other than Node's own modules.
import * as fs from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const OUT = path.join(DIST, 'bundle');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

const URL_START = /new URL\('\.\/([\w.-]+)\.js', import\.meta\.url\)/g;
const LAZY_REQUIRE = /createRequire\(import\.meta\.url\)\('([\w@/.-]+)'\)/g;

const OPTIONS = {
  absWorkingDir: ROOT,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
};

/**
 * The entries: the CLI, and every module that a module the bundle holds starts by its URL
 * (found by bundling without writing, until no new one turns up; only modules that are
 * reached count, so a stale file in dist/ adds nothing). Also the packages required lazily.
 */
async function entriesAndLazyPackages() {
  const entryPoints = { kproxc: path.join(DIST, 'cli/bin.js') };
  const lazyPackages = new Set();
  for (let size = 0; size !== Object.keys(entryPoints).length; ) {
    size = Object.keys(entryPoints).length;
    const { metafile } = await build({ ...OPTIONS, entryPoints, outdir: OUT, write: false, metafile: true, packages: 'external', splitting: true });
    for (const input of Object.keys(metafile.inputs)) {
      const file = path.resolve(ROOT, input);
      const text = fs.readFileSync(file, 'utf8');
      for (const [, name] of text.matchAll(URL_START)) {
        const entry = path.join(path.dirname(file), `${name}.js`);
        if (entryPoints[name] && entryPoints[name] !== entry) throw new Error(`two modules started by URL are named ${name}.js`);
        entryPoints[name] = entry;
      }
      for (const [, name] of text.matchAll(LAZY_REQUIRE)) if (!name.startsWith('.')) lazyPackages.add(name);
    }
  }
  return { entryPoints, lazyPackages };
}

const { entryPoints, lazyPackages } = await entriesAndLazyPackages();

/** Loads each lazily required package from its file beside the chunks. */
const lazyRequires = {
  name: 'lazy-requires',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      if (!text.includes('createRequire(import.meta.url)(')) return undefined;
      return { contents: text.replace(LAZY_REQUIRE, (all, name) => (lazyPackages.has(name) ? `createRequire(import.meta.url)('./${name}.cjs')` : all)), loader: 'js' };
    });
  },
};

fs.rmSync(OUT, { recursive: true, force: true });
const result = await build({
  ...OPTIONS,
  entryPoints,
  outdir: OUT,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  splitting: true,
  define: { KPROXC_VERSION: JSON.stringify(pkg.version) },
  plugins: [lazyRequires],
  metafile: true,
  // commander is CommonJS and requires Node's modules: an ES module has no `require` of
  // its own, so each file gets one.
  banner: { js: "import { createRequire as kproxcRequire } from 'node:module'; const require = kproxcRequire(import.meta.url);" },
});

const require = createRequire(path.join(ROOT, 'package.json'));
for (const name of lazyPackages) {
  const more = await build({ ...OPTIONS, entryPoints: [require.resolve(name)], outfile: path.join(OUT, `${name}.cjs`), format: 'cjs', metafile: true });
  Object.assign(result.metafile.outputs, more.metafile.outputs);
}

// Nothing may be left to find in node_modules when the package is installed.
const builtin = new Set(builtinModules);
const outside = Object.entries(result.metafile.outputs).flatMap(([out, o]) =>
  o.imports.filter((i) => i.external && !i.path.startsWith('node:') && !builtin.has(i.path)).map((i) => `${out} imports ${i.path}`),
);
if (outside.length) throw new Error(`the bundle is not self-contained:\n${outside.join('\n')}`);
