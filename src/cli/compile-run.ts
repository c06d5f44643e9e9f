// The work of `kproxc compile`: the complete ruleset for one node, from the nftables
// backend or (loaded only when asked for) the ovs one.
import { compileNftables, type CompileResult } from '../compile.js';
import { emit, EXIT_OK, loadInputs, printDiagnostics, type ExitCode, type Io } from './io.js';
import type { CompileCommandOptions } from './options.js';
import { statsJson, statsText } from '../nft/stats-report.js';

export async function runCompile(io: Io, files: string[], o: CompileCommandOptions): Promise<ExitCode> {
  const inputs = loadInputs(io, files);
  let result: CompileResult;
  if (o.backend === 'ovs') {
    const { compileOvs } = await import('../compile-ovs.js');
    result = compileOvs(inputs, { ...o.compile, strict: o.strict });
  } else {
    result = compileNftables(inputs, { ...o.compile, tableName: o.tableName, format: o.format, strict: o.strict, layout: o.layout, stats: o.stats !== undefined });
  }
  printDiagnostics(io, result.warnings);
  emit(io, o.output, result.output);
  // After the output: the compiles the stats count (the other layout's, and a text
  // output's own layout again, with statements) never delay the ruleset.
  const stats = result.stats?.();
  if (stats) io.stderr(o.stats === 'json' ? statsJson(stats) : statsText(stats));
  return EXIT_OK;
}
