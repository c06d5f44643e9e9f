// Runs the CLI in-process (fast) or as a real process (for exit codes and stdio).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/main.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/kproxc');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function kproxc(args: string[], stdin: string | Buffer = ''): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    readStdin: () => (typeof stdin === 'string' ? Buffer.from(stdin) : stdin),
  });
  return { code, stdout, stderr };
}

/** The built binary as a child process (needs `npm run build`, which `npm test` does first). */
export function kproxcProcess(args: string[], stdin = ''): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { input: stdin, encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 30 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
