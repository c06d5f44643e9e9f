// The command line: the program and its commands, declared here. Each command's action
// turns its flags into typed options (options.ts), runs the module that does its work, and
// gets back the exit code: 0 ok, 1 diff found changes, 2 bad input or usage, 70 our bug.
// diff and trace load their modules only when they run (loading them on every start would
// cost some 30 ms). compile's are loaded at once: nearly every run needs them, and loaded
// later they would be three more files of the bundle to read on each compile.
import { Command, CommanderError } from 'commander';
import { InternalError, UsageError, UserInputError } from '../diag/diagnostic.js';
import { DUMP_COMMAND } from '../model/decode-service.js';
import { EXIT_BUG, EXIT_OK, EXIT_USER, printDiagnostics, processIo, type ExitCode, type Io } from './io.js';
import {
  addCompileOptions,
  addDiffOptions,
  addTraceOptions,
  compileCommandOptionsFrom,
  diffOptionsFrom,
  traceOptionsFrom,
  type CompileFlags,
  type DiffCommandOptions,
  type DiffFlags,
  type TraceFlags,
} from './options.js';
import { runCompile } from './compile-run.js';
import { packageVersion } from './version.js';

/** `diff` for the backend asked for; each run module is loaded only when it runs. */
async function runDiffFor(io: Io, files: string[], o: DiffCommandOptions): Promise<ExitCode> {
  switch (o.backend) {
    case 'nftables':
      return (await import('./diff-run.js')).runDiff(io, files, o);
    case 'ovs':
      return (await import('./ovs-diff-run.js')).runOvsDiff(io, files, o);
  }
}

/** Help text after the options: a few commands to copy. */
function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}\n`).join('')}`;
}

function buildProgram(io: Io, done: (code: ExitCode) => void): Command {
  const program = new Command('kproxc')
    .description('Kubernetes Service proxy rule compiler')
    .version(packageVersion(), '-V, --version', 'print the version of kproxc')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .addHelpText(
      'after',
      examples(
        'kproxc compile cluster.yaml --node worker-1 | nft -f -',
        'kproxc diff cluster.yaml --node worker-1 --live <(nft -j list ruleset) | nft -f -',
        'kproxc trace cluster.yaml --src 10.244.1.3 --dst 10.96.0.10 --dport 53 --proto udp',
      ),
    );

  addCompileOptions(program.command('compile').description('print the complete ruleset for one node'))
    .addHelpText(
      'after',
      examples(
        'kproxc compile cluster.yaml kube-proxy-config.yaml --node worker-1 | nft -f -',
        `${DUMP_COMMAND} | kproxc compile - --node worker-1 -o ruleset.nft`,
        'kproxc compile cluster.yaml --node worker-1 --backend ovs > flows.txt && ovs-ofctl -O OpenFlow15 bundle br-int flows.txt',
      ),
    )
    .action(async (files: string[], flags: CompileFlags, command: Command) => {
      const opts = compileCommandOptionsFrom(flags, command.getOptionValueSource('format') === 'cli');
      done(await runCompile(io, files, opts));
    });

  addDiffOptions(program.command('diff').description('print the smallest nft transaction (or, --backend ovs, ovs-ofctl bundle) from the live state to the compiled one'))
    .addHelpText(
      'after',
      examples(
        'kproxc diff cluster.yaml --node worker-1 --live <(nft -j list ruleset) | nft -f -',
        'nft -j list ruleset > live.json && kproxc diff cluster.yaml --node worker-1 --live live.json --exit-code -o changes.nft',
        'kproxc diff --backend ovs cluster.yaml --live-flows <(ovs-ofctl -O OpenFlow15 --no-stats dump-flows br-int) --live-groups <(ovs-ofctl -O OpenFlow15 dump-groups br-int) > changes.bundle',
      ),
    )
    .action(async (files: string[], flags: DiffFlags) => {
      const opts = diffOptionsFrom(files, flags);
      done(await runDiffFor(io, files, opts));
    });

  addTraceOptions(
    program
      .command('trace')
      .description('walk the compiled rules for a packet arriving at the node (or sent by it, --from-node), and print where it goes'),
  )
    .addHelpText(
      'after',
      examples(
        'kproxc trace cluster.yaml --src 203.0.113.7 --dst 198.51.100.20 --dport 443',
        'kproxc trace cluster.yaml --src 10.244.1.3 --dst 10.96.0.10 --dport 53 --proto udp --layout fast-load --json',
        'kproxc trace cluster.yaml --packets packets.json --backend ovs',
      ),
    )
    .action(async (files: string[], flags: TraceFlags) => {
      const opts = traceOptionsFrom(flags);
      done(await (await import('./trace-run.js')).runTrace(io, files, opts));
    });

  return program;
}

/**
 * Runs the CLI; returns the exit code. Never throws. `extend` adds commands to the program
 * (tests use it for a command that fails as a bug would).
 */
export async function run(argv: string[], io: Io = processIo, extend?: (program: Command, io: Io) => void): Promise<ExitCode> {
  const debug = argv.includes('--debug');
  let code: ExitCode = EXIT_OK;
  try {
    const program = buildProgram(io, (c) => {
      code = c;
    });
    extend?.(program, io);
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    code = handleError(io, e, debug);
  }
  return code;
}

/**
 * An error that is our bug: one line asking for a report (the stack only with --debug),
 * the message cut to that line so that no input text can stretch it.
 */
export function internalErrorText(e: unknown, debug: boolean): string {
  const err = e instanceof Error ? e : undefined;
  const stack = debug ? `${err?.stack ?? String(e)}\n` : '';
  const what = err ? (e instanceof InternalError ? err.message : `${err.name}: ${err.message}`) : String(e);
  const line = what.replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, 300);
  return `${stack}kproxc: internal error (a bug in kproxc; please report it with the input that caused it): ${line}\n`;
}

function handleError(io: Io, e: unknown, debug: boolean): ExitCode {
  if (e instanceof UserInputError) {
    printDiagnostics(io, e.diagnostics);
    return EXIT_USER;
  }
  if (e instanceof UsageError) {
    io.stderr(`kproxc: ${e.message}\n`);
    return EXIT_USER;
  }
  if (e instanceof CommanderError) {
    // help and version exit 0; everything else is a usage error commander already printed.
    return e.exitCode === 0 ? EXIT_OK : EXIT_USER;
  }
  io.stderr(internalErrorText(e, debug));
  return EXIT_BUG;
}
