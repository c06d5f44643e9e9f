// Output files are replaced atomically: written to a temporary file beside the target,
// then renamed over it, so a failed run never leaves a partial ruleset behind.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function writeAtomically(file: string, data: string | readonly Uint8Array[]): void {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    if (typeof data === 'string') fs.writeFileSync(tmp, data, { mode: 0o644 });
    else writeChunks(tmp, data);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

function writeChunks(file: string, chunks: readonly Uint8Array[]): void {
  const fd = fs.openSync(file, 'w', 0o644);
  try {
    for (const c of chunks) {
      for (let done = 0; done < c.byteLength; ) done += fs.writeSync(fd, c, done);
    }
  } finally {
    fs.closeSync(fd);
  }
}
