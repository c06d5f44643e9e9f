// How a command meets the process: standard input and output behind `Io` (so that tests run
// the CLI in-process), diagnostics printed, results written, and the exit codes.
import * as fs from 'node:fs';
import type { Output } from '../compile.js';
import { formatDiagnostic, sortDiagnostics, UserInputError, type Diagnostic } from '../diag/diagnostic.js';
import { readInputs, type InputFile } from '../input/source.js';
import { writeAtomically } from './output.js';

export const EXIT_OK = 0;
/** `diff --exit-code` found changes: not an error. */
export const EXIT_CHANGES = 1;
/** Bad input or bad usage. */
export const EXIT_USER = 2;
/** Our own bug. */
export const EXIT_BUG = 70;

export type ExitCode = typeof EXIT_OK | typeof EXIT_CHANGES | typeof EXIT_USER | typeof EXIT_BUG;

export interface Io {
  stdout: (s: string) => void;
  /** Bytes to standard output (used before the call returns); without it they go through stdout as text. */
  stdoutBytes?: (b: Uint8Array) => void;
  stderr: (s: string) => void;
  /** Standard input, whole, as bytes. */
  readStdin: () => Buffer;
}

// Node writes standard output to a file before write() returns (a SyncWriteStream); to a
// pipe it may queue the write, holding on to the bytes. The writer uses its buffer again
// once stdoutBytes returns, so a pipe gets a copy; a file does not need one (copies of a
// 50k-Service ruleset's chunks took a quarter of a second).
let stdoutFile: boolean | undefined;
function stdoutIsFile(): boolean {
  if (stdoutFile === undefined) {
    try {
      stdoutFile = fs.fstatSync(1).isFile();
    } catch {
      stdoutFile = false;
    }
  }
  return stdoutFile;
}

export const processIo: Io = {
  stdout: (s) => process.stdout.write(s),
  stdoutBytes: (b) => process.stdout.write(stdoutIsFile() ? b : Buffer.from(b)),
  stderr: (s) => process.stderr.write(s),
  readStdin: () => fs.readFileSync(0),
};

/** Standard input as text (UTF-8). */
export function stdinText(io: Io): string {
  return io.readStdin().toString('utf8');
}

/** Diagnostics on standard error, sorted, one per line. */
export function printDiagnostics(io: Io, ds: Diagnostic[]): void {
  for (const d of sortDiagnostics(ds)) io.stderr(formatDiagnostic(d) + '\n');
}

/** The snapshot's files (directories expanded, - for standard input); every problem reading them at once. */
export function loadInputs(io: Io, args: string[]): InputFile[] {
  const { files, diagnostics } = readInputs(args, io.readStdin);
  if (diagnostics.length) throw new UserInputError(diagnostics);
  return files;
}

/** Writes the result to -o FILE atomically, or to standard output. */
export function emit(io: Io, out: string | undefined, data: Output): void {
  if (out) writeAtomically(out, data, '-o');
  else if (typeof data === 'string') io.stdout(data);
  else if (io.stdoutBytes) data(io.stdoutBytes);
  // Chunks end at line ends, so each one is whole UTF-8 text.
  else data((chunk) => io.stdout(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')));
}
