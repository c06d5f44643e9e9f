// The process around run(): its exit code, a reader that goes away, and errors that escape.
import type { Command } from 'commander';
import { EXIT_BUG, type Io } from './io.js';
import { internalErrorText, run } from './main.js';

/**
 * Runs the CLI as the process and sets its exit code. `extend` adds commands to the
 * program (tests use it to run a command that fails as a bug would).
 */
export function runProcess(argv: string[], extend?: (program: Command, io: Io) => void): void {
  const debug = argv.includes('--debug');
  // A reader that goes away (kproxc compile x | head) is not an error of ours: stop quietly.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  // Anything that escapes run() (an error in a callback) is still one line and exit 70.
  process.on('uncaughtException', (e) => {
    process.stderr.write(internalErrorText(e, debug));
    process.exit(EXIT_BUG);
  });
  run(argv, undefined, extend).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(internalErrorText(e, debug));
      process.exitCode = EXIT_BUG;
    },
  );
}
