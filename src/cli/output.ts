// Output files are replaced atomically: written to a new temporary file beside the target,
// flushed, then renamed over it, so a failed run never leaves a partial ruleset behind
// and a reader sees the old file or the new one, never a mix.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../diag/diagnostic.js';

/** The mode of the file being replaced, so replacing it does not change who may read it. */
function modeOf(file: string): number {
  try {
    return fs.statSync(file).mode & 0o7777;
  } catch {
    return 0o644;
  }
}

export function writeAtomically(file: string, data: string): void {
  const dir = path.dirname(path.resolve(file));
  // A fresh name, opened with O_EXCL: never an existing file, nor a link planted there.
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx', modeOf(file));
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw new UsageError(`-o ${file}: cannot write: ${code}`);
  }
}
