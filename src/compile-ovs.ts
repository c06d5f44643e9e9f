// The pipeline for `compile --backend ovs`: the same model as the nftables backend, printed
// as an ovs-ofctl bundle.
import type { InputFile } from './input/source.js';
import type { CompileOptions } from './model/options.js';
import { compileOvsBundle } from './backends/ovs/index.js';
import { failOnWarnings, loadModel, type CompileResult } from './compile.js';

export function compileOvs(files: InputFile[], opts: CompileOptions & { strict?: boolean }): CompileResult {
  const model = loadModel(files, opts, opts.strict);
  const warnings = [...model.warnings];
  const output = compileOvsBundle(model.families, warnings);
  failOnWarnings(opts.strict, warnings);
  return { output, warnings };
}
