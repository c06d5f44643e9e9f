// `kproxc diff FILE... --live LIVE`: the nft transaction that turns the live tables (as
// `nft -j list ruleset` prints them) into what `compile` would load.
import type { Command } from 'commander';
import { addSnapshotOptions, layoutOption, type Io } from './main.js';
import { commandRegistry } from './registry.js';

function registerDiff(program: Command, io: Io): void {
  addSnapshotOptions(
    program
      .command('diff')
      .description('print the smallest nft transaction from the live ruleset to the compiled one')
      .requiredOption('--live <file>', 'what `nft -j list ruleset` printed (a file, or - for standard input)')
      .addOption(layoutOption())
      .option('--exit-code', 'exit 1 when the transaction is not empty, 0 when it is')
      .option('--two-phase <file>', 'write the deletions of unused chains to FILE, to apply later (kernels before 6.2)')
      .option('-o, --output <file>', 'write to FILE atomically instead of standard output'),
  ).action(async (files: string[], o: Record<string, unknown>) => {
    // The work, and the modules it needs, are loaded only when the command runs.
    const { runDiff } = await import('./diff-run.js');
    await runDiff(io, files, o);
  });
}

commandRegistry.extraCommands.push(registerDiff);
