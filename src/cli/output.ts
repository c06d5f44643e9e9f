// Output files are replaced atomically: written to a new temporary file beside the target,
// flushed, then renamed over it, so a failed run never leaves a partial ruleset behind
// and a reader sees the old file or the new one, never a mix.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { displayText, UsageError } from '../diag/diagnostic.js';

/** The mode of the file being replaced, so replacing it does not change who may read it. */
function modeOf(file: string): number {
  try {
    return fs.statSync(file).mode & 0o7777;
  } catch {
    return 0o644;
  }
}

/** Where the data goes: through symbolic links to the file they name (the link stays a link). */
function target(file: string): { path: string; regular: boolean } {
  try {
    const real = fs.realpathSync(file);
    return { path: real, regular: fs.statSync(real).isFile() };
  } catch {
    return { path: file, regular: true }; // a new file
  }
}

/** Text, or a writer that hands the same over as chunks of UTF-8 bytes (a large ruleset). */
export type OutputData = string | ((sink: (chunk: Uint8Array) => void) => void);

function writeData(fd: number, data: OutputData): void {
  if (typeof data === 'string') {
    fs.writeFileSync(fd, data);
    return;
  }
  data((c) => {
    for (let done = 0; done < c.byteLength; ) done += fs.writeSync(fd, c, done);
  });
}

/**
 * The error for a file that cannot be written, named as the user gave it after the flag
 * that named it. A missing folder is said in words: a bare ENOENT reads as if the file
 * itself were expected to exist.
 */
function cannotWrite(flag: string, file: string, e: unknown): UsageError {
  const code = (e as NodeJS.ErrnoException).code;
  const dir = path.dirname(file);
  const why = code === 'ENOENT' && !fs.existsSync(dir) ? `folder ${displayText(dir)} does not exist` : (code ?? String(e));
  return new UsageError(`${flag} ${displayText(file)}: cannot write: ${why}`);
}

/**
 * Fails, as a write there would, when the folder of any output file is missing: a command
 * that writes several files checks them all before it writes the first, so that a failed
 * run leaves nothing on standard output and no file half of a set.
 */
export function checkOutputFolders(outputs: [flag: string, file: string | undefined][]): void {
  for (const [flag, file] of outputs) {
    if (file === undefined || file === '-') continue;
    const dir = path.dirname(path.resolve(file));
    if (!fs.existsSync(dir)) throw cannotWrite(flag, file, Object.assign(new Error('missing folder'), { code: 'ENOENT' }));
  }
}

/** Writes FILE, the value of `flag` (named in errors), as described at the top of this file. */
export function writeAtomically(file: string, data: OutputData, flag: string): void {
  const given = file;
  const t = target(file);
  if (!t.regular) {
    // A device, pipe or socket (-o /dev/stdout) is written to, never replaced by a file.
    try {
      const fd = fs.openSync(t.path, 'w');
      try {
        writeData(fd, data);
      } finally {
        fs.closeSync(fd);
      }
      return;
    } catch (e) {
      throw cannotWrite(flag, given, e);
    }
  }
  file = t.path;
  const dir = path.dirname(path.resolve(file));
  // A fresh name, opened with O_EXCL: never an existing file, nor a link planted there.
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx', modeOf(file));
    writeData(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw cannotWrite(flag, given, e);
  }
}
