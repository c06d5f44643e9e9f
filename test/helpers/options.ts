// Fixture `# kproxc-args:` to CompileOptions, through the CLI's own option parser.
import { Command } from 'commander';
import { addSnapshotOptions, compileOptionsFrom } from '../../src/cli/options.js';
import type { CompileOptions } from '../../src/model/options.js';

export function parseArgsToOptions(args: string[]): CompileOptions {
  let opts: Record<string, unknown> = {};
  const cmd = addSnapshotOptions(new Command('x').exitOverride()).action((_files: string[], o: Record<string, unknown>) => {
    opts = o;
  });
  cmd.parse(['snapshot', ...args], { from: 'user' });
  return compileOptionsFrom(opts);
}
