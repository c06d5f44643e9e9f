// Command-line wiring: flags to typed options, inputs read, output written atomically,
// diagnostics printed, results mapped to exit codes (0 ok, 1 diff found changes, 2 bad
// input or usage, 70 our own bug).
import * as fs from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { formatDiagnostic, InternalError, sortDiagnostics, UsageError, UserInputError, type Diagnostic } from '../diag/diagnostic.js';
import { readInputs, type InputFile } from '../input/source.js';
import type { CompileOptions } from '../model/options.js';
import { writeAtomically } from './output.js';
import { compileNftables, type Output } from '../compile.js';
import { LAYOUTS, type Layout } from '../backends/nftables/layout.js';
import { commandRegistry } from './registry.js';

export const EXIT_OK = 0;
export const EXIT_CHANGES = 1;
export const EXIT_USER = 2;
export const EXIT_BUG = 70;

export interface Io {
  stdout: (s: string) => void;
  /** Bytes to standard output (used before the call returns); without it they go through stdout as text. */
  stdoutBytes?: (b: Uint8Array) => void;
  stderr: (s: string) => void;
  readStdin: () => string;
}

const processIo: Io = {
  stdout: (s) => process.stdout.write(s),
  // A copy: the writer uses its buffer again once this returns.
  stdoutBytes: (b) => process.stdout.write(Buffer.from(b)),
  stderr: (s) => process.stderr.write(s),
  readStdin: () => fs.readFileSync(0, 'utf8'),
};

/** Diagnostics on standard error, sorted, one per line. */
export function printDiagnostics(io: Io, ds: Diagnostic[]): void {
  for (const d of sortDiagnostics(ds)) io.stderr(formatDiagnostic(d) + '\n');
}

export function loadInputs(io: Io, args: string[]): InputFile[] {
  const { files, diagnostics } = readInputs(args, io.readStdin);
  if (diagnostics.length) throw new UserInputError(diagnostics);
  return files;
}

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

function intArg(flag: string, min: number, max: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`${flag}: must be a whole number from ${min} to ${max}`);
    return Number(v);
  };
}

function boolArg(flag: string) {
  return (v: string): boolean => {
    if (v !== 'true' && v !== 'false') throw new UsageError(`${flag}: must be true or false`);
    return v === 'true';
  };
}

/** The options every command that compiles a snapshot takes. */
export function addSnapshotOptions(cmd: Command): Command {
  return cmd
    .argument('<files...>', 'snapshot files or directories, or - for standard input')
    .option('--node <name>', 'the node to compile for')
    .option('--node-ip <ip>', 'an IP of the node (repeatable)', collect)
    .option('--cluster-cidr <cidrs>', 'override clusterCIDR (comma-separated, one per family)')
    .option('--detect-local-mode <mode>', 'override detectLocalMode')
    .option('--node-port-addresses <cidrs>', 'override nodePortAddresses (comma-separated CIDRs, or primary)', collect)
    .option('--masquerade-all [bool]', 'override masqueradeAll', boolArg('--masquerade-all'))
    .option('--masquerade-bit <n>', 'override masqueradeBit', intArg('--masquerade-bit', 0, 31))
    .option('--table <name>', 'nftables table name', 'kube-proxy')
    .addOption(new Option('--family <family>', 'compile one IP family only').choices(['ipv4', 'ipv6']))
    .option('--strict', 'treat warnings as errors')
    .option('--debug', 'show stack traces of internal errors');
}

/** --layout of compile and diff: kube-proxy's nftables layout, or fast-load (docs/fast-load.md). */
export function layoutOption(): Option {
  return new Option('--layout <layout>', 'nftables layout: kube-proxy, or fast-load (the same behaviour, loaded many times faster)')
    .choices([...LAYOUTS])
    .default('kube-proxy');
}

export function compileOptionsFrom(o: Record<string, unknown>): CompileOptions {
  if (o.table !== undefined && !/^[A-Za-z_.][A-Za-z0-9_.-]{0,255}$/.test(String(o.table))) {
    throw new UsageError('--table: must be an nft name: letters, digits, "_", "." and "-", not starting with a digit or "-"');
  }
  return {
    node: o.node as string | undefined,
    nodeIPs: o.nodeIp as string[] | undefined,
    clusterCIDR: o.clusterCidr as string | undefined,
    detectLocalMode: o.detectLocalMode as string | undefined,
    nodePortAddresses: o.nodePortAddresses as string[] | undefined,
    masqueradeAll: o.masqueradeAll === undefined ? undefined : o.masqueradeAll === true,
    masqueradeBit: o.masqueradeBit as number | undefined,
    family: o.family === 'ipv4' ? 4 : o.family === 'ipv6' ? 6 : undefined,
  };
}

/** Writes the result to -o FILE atomically, or to standard output. */
export function emit(io: Io, out: string | undefined, data: Output): void {
  if (out) writeAtomically(out, data);
  else if (typeof data === 'string') io.stdout(data);
  else if (io.stdoutBytes) data(io.stdoutBytes);
  // Chunks end at line ends, so each one is whole UTF-8 text.
  else data((chunk) => io.stdout(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')));
}

function buildProgram(io: Io): Command {
  const program = new Command('kproxc')
    .description('Kubernetes Service proxy rule compiler')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });

  addSnapshotOptions(
    program
      .command('compile')
      .description('print the complete ruleset for one node')
      .addOption(new Option('--backend <backend>', 'nftables or ovs').choices(['nftables', 'ovs']).default('nftables'))
      .addOption(new Option('--format <format>', 'nftables output: text or json').choices(['text', 'json']))
      .addOption(layoutOption())
      .option('-o, --output <file>', 'write to FILE atomically instead of standard output'),
  ).action(async (files: string[], o: Record<string, unknown>) => {
    const inputs = loadInputs(io, files);
    const opts = compileOptionsFrom(o);
    let result: { output: Output; warnings: Diagnostic[] };
    if (o.backend === 'ovs') {
      if (o.format !== undefined) throw new UsageError('--format does not apply to --backend ovs (its output is an ovs-ofctl bundle)');
      if (o.layout !== 'kube-proxy') throw new UsageError('--layout does not apply to --backend ovs');
      const ovs = commandRegistry.compileOvs;
      if (!ovs) throw new UsageError('--backend ovs is not available in this build');
      result = await ovs(inputs, { ...opts, strict: o.strict === true });
    } else {
      result = compileNftables(inputs, {
        ...opts,
        tableName: o.table as string,
        format: (o.format as 'text' | 'json' | undefined) ?? 'text',
        strict: o.strict === true,
        layout: o.layout as Layout,
      });
    }
    printDiagnostics(io, result.warnings);
    emit(io, o.output as string | undefined, result.output);
  });

  for (const register of commandRegistry.extraCommands) register(program, io);
  return program;
}

/** Runs the CLI; returns the exit code. Never throws. */
export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const debug = argv.includes('--debug');
  let code = EXIT_OK;
  try {
    const program = buildProgram(io);
    program.exitOverride();
    await program.parseAsync(argv, { from: 'user' });
    code = commandRegistry.lastExitCode ?? EXIT_OK;
  } catch (e) {
    code = handleError(io, e, debug);
  }
  commandRegistry.lastExitCode = undefined;
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

function handleError(io: Io, e: unknown, debug: boolean): number {
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
