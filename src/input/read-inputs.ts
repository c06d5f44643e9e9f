// The files of a snapshot as the user names them: directories expanded (their *.yaml, *.yml
// and *.json in name order), standard input for "-", every file's bytes decoded as
// encoding.ts takes them. What cannot be read is a diagnostic at the file, never an exception.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Diagnostic } from '../diag/diagnostic.js';
import { decodeText } from './encoding.js';
import type { InputFile } from './source.js';

/** How diagnostics name standard input: unquoted, so that editors can jump to FILE:LINE:COL. */
export const STDIN = '<stdin>';

/**
 * Expands directories (their *.yaml, *.yml, *.json in name order) and reads every file,
 * its bytes decoded as decodeText takes them.
 */
export function readInputs(args: string[], readStdin: () => Uint8Array): { files: InputFile[]; diagnostics: Diagnostic[] } {
  const files: InputFile[] = [];
  const diagnostics: Diagnostic[] = [];
  const problem = (file: string, message: string, line = 1, col = 1) =>
    diagnostics.push({ severity: 'error', pos: { file, line, col }, message });
  const errno = (e: unknown) => (e as NodeJS.ErrnoException).code ?? 'error';
  const add = (name: string, bytes: Uint8Array) => {
    const read = decodeText(bytes);
    if ('text' in read) files.push({ name, text: read.text });
    else problem(name, read.problem, read.line, read.col);
  };
  const readFile = (p: string) => {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(p);
    } catch (e) {
      problem(p, `cannot read: ${errno(e)}`);
      return;
    }
    add(p, bytes);
  };
  for (const arg of args) {
    if (arg === '-') {
      let bytes: Uint8Array;
      try {
        bytes = readStdin();
      } catch (e) {
        problem(STDIN, `cannot read: ${errno(e)}`);
        continue;
      }
      add(STDIN, bytes);
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(arg);
    } catch (e) {
      problem(arg, errno(e) === 'ENOENT' ? 'no such file or directory' : `cannot read: ${errno(e)}`);
      continue;
    }
    if (!stat.isDirectory()) {
      readFile(arg);
      continue;
    }
    let names: string[];
    try {
      names = fs
        .readdirSync(arg)
        .filter((n) => /\.(ya?ml|json)$/.test(n))
        .sort();
    } catch (e) {
      problem(arg, `cannot read directory: ${errno(e)}`);
      continue;
    }
    let found = 0;
    const before = diagnostics.length;
    for (const n of names) {
      const p = path.join(arg, n);
      let isFile = false;
      try {
        isFile = fs.statSync(p).isFile();
      } catch (e) {
        problem(p, `cannot read: ${errno(e)}`);
      }
      if (isFile) {
        found++;
        readFile(p);
      }
    }
    if (found === 0 && diagnostics.length === before) problem(arg, 'directory holds no *.yaml, *.yml or *.json file');
  }
  return { files, diagnostics };
}
