// Process entry point.
import { EXIT_BUG, internalErrorText, run } from './main.js';
import './commands.js';

const debug = process.argv.includes('--debug');

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

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(internalErrorText(e, debug));
    process.exitCode = EXIT_BUG;
  },
);
