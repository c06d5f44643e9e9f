// `kproxc trace`: compile the snapshot, then walk the compiled rules for one packet (flags)
// or many (--packets FILE), printing each path and outcome, or one JSON object per packet.
import { Option, type Command } from 'commander';
import { DEFAULT_SOURCE_PORT } from '../trace/packet.js';
import { addSnapshotOptions, type Io } from './main.js';
import { commandRegistry } from './registry.js';

function register(program: Command, io: Io): void {
  addSnapshotOptions(
    program
      .command('trace')
      .description('walk the compiled rules for a packet arriving at the node (or sent by it, --from-node), and print where it goes')
      .option('--src <ip>', 'source address')
      .option('--dst <ip>', 'destination address')
      .option('--dport <port>', 'destination port')
      .option('--sport <port>', `source port (default ${DEFAULT_SOURCE_PORT})`)
      .addOption(new Option('--proto <protocol>', 'transport protocol').choices(['tcp', 'udp', 'sctp']).default('tcp'))
      .option('--iif <name>', 'the interface the packet arrives on (default: a Pod interface for Pod sources, else the node network)')
      .option('--from-node', 'trace a packet the node sends itself (output hook) instead of one arriving at it')
      .option('--packets <file>', 'a JSON array of {sourceIP, destIP, destPort, protocol} to trace')
      .addOption(new Option('--backend <backend>', 'which compiled rules to walk').choices(['nftables', 'ovs']).default('nftables'))
      .option('--json', 'one JSON object per packet, one per line'),
  ).action(async (files: string[], o: Record<string, unknown>) => {
    // The tracers, and the modules they need, are loaded only when the command runs.
    const { runTrace } = await import('./trace-run.js');
    runTrace(io, files, o);
  });
}

commandRegistry.extraCommands.push(register);
