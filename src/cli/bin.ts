// Process entry point.
import { run } from './main.js';
import './commands.js';

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`kproxc: internal error: ${String(e)}\n`);
    process.exitCode = 70;
  },
);
