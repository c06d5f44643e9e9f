// npm's `prepare`: after `npm ci` or `npm install` in a clone of the repository, build, so
// that bin/kproxc runs. `npm pack` and `npm publish` run it as well, right after `prepack`
// has built the same: there it does nothing, rather than build a second time.
import { spawnSync } from 'node:child_process';

if (!['pack', 'publish'].includes(process.env.npm_command ?? '')) {
  // The npm that runs this script, when it says which (npm_execpath), else the one on PATH.
  const npm = process.env.npm_execpath;
  const r = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
}
