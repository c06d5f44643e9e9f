// The package's version, for --version. The bundle has it written in when it is built
// (scripts/bundle.mjs defines KPROXC_VERSION), so an installed kproxc reads no file for it;
// run from the modules (src/cli or dist/cli: tests, the fuzzer) it comes from the
// package.json two folders up.
import * as fs from 'node:fs';

declare const KPROXC_VERSION: string | undefined;

export function packageVersion(): string {
  if (typeof KPROXC_VERSION === 'string') return KPROXC_VERSION;
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
