// Output files are replaced atomically: written to a temporary file beside the target,
// then renamed over it, so a failed run never leaves a partial ruleset behind.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function writeAtomically(file: string, data: string): void {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, data, { mode: 0o644 });
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}
