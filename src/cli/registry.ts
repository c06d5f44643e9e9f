// Commands and backends that live in their own modules register here, so that main.ts
// stays the one place that maps results to exit codes.
import type { Command } from 'commander';
import type { Diagnostic } from '../diag/diagnostic.js';
import type { Output } from '../compile.js';
import type { InputFile } from '../input/source.js';
import type { CompileOptions } from '../model/options.js';
import type { Io } from './main.js';

export interface Registry {
  compileOvs?: (files: InputFile[], opts: CompileOptions & { strict?: boolean }) => Promise<{ output: Output; warnings: Diagnostic[] }>;
  extraCommands: ((program: Command, io: Io) => void)[];
  /** A command that ends with a non-zero status that is not an error (diff --exit-code). */
  lastExitCode?: number;
}

export const commandRegistry: Registry = { extraCommands: [] };
