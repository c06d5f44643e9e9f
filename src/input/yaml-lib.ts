// The yaml package, loaded the first time it is needed. The fast path reads most
// snapshots without it (it is the full parser, for positions and for what the fast path
// leaves), and loading it costs some 40 ms of every run.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let lib: typeof Yaml | undefined;

export function yaml(): typeof Yaml {
  return (lib ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}
