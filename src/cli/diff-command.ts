// `kproxc diff FILE... --live LIVE`: the nft transaction that turns the live tables (as
// `nft -j list ruleset` prints them) into what `compile` would load; with `--backend ovs
// --live-flows F --live-groups G`, the ovs-ofctl bundle that does the same for a bridge.
import { Option, type Command } from 'commander';
import { UsageError } from '../diag/diagnostic.js';
import { addSnapshotOptions, type Io } from './main.js';
import { commandRegistry } from './registry.js';

function registerDiff(program: Command, io: Io): void {
  addSnapshotOptions(
    program
      .command('diff')
      .description('print the smallest nft transaction (or, --backend ovs, ovs-ofctl bundle) from the live state to the compiled one')
      .option('--live <file>', 'what `nft -j list ruleset` printed (a file, or - for standard input)')
      .addOption(new Option('--backend <backend>', 'nftables or ovs').choices(['nftables', 'ovs']).default('nftables'))
      .option('--live-flows <file>', 'ovs: what `ovs-ofctl -O OpenFlow15 --no-stats dump-flows BRIDGE` printed')
      .option('--live-groups <file>', 'ovs: what `ovs-ofctl -O OpenFlow15 dump-groups BRIDGE` printed')
      .option('--exit-code', 'exit 1 when the transaction is not empty, 0 when it is')
      .option('--two-phase <file>', 'write the deletions of unused chains to FILE, to apply later (kernels before 6.2)')
      .option('-o, --output <file>', 'write to FILE atomically instead of standard output'),
  ).action(async (files: string[], o: Record<string, unknown>) => {
    // The work, and the modules it needs, are loaded only when the command runs.
    if (o.backend === 'ovs') {
      const { runOvsDiff } = await import('./ovs-diff-run.js');
      commandRegistry.lastExitCode = await runOvsDiff(io, files, o);
      return;
    }
    if (o.liveFlows !== undefined || o.liveGroups !== undefined) throw new UsageError('--live-flows and --live-groups need --backend ovs');
    if (o.live === undefined) throw new UsageError("required option '--live <file>' not specified");
    const { runDiff } = await import('./diff-run.js');
    await runDiff(io, files, o);
  });
}

commandRegistry.extraCommands.push(registerDiff);
