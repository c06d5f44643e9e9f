// A data-plane run killed outright (SIGKILL, a lost machine) cannot run its afterAll. Its
// namespaces carry the pid of the test process that made them (kproxc-<prefix>-<pid>-...), so
// the next run removes those whose process is gone, and only those: a suite running at the
// same time in another worker keeps its own. Their links go with them; their echo servers
// exit by themselves when their standard input closes.
import { execFileSync, spawnSync } from 'node:child_process';
import { NETNS_PREFIX } from './topology.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes namespaces of a suite (by its prefix) left by dead processes; returns their names. */
export function removeStaleNamespaces(prefix: string = NETNS_PREFIX): string[] {
  const pattern = new RegExp(`^kproxc-${prefix}-(\\d+)-`);
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter(Boolean);
  const stale = names.filter((n) => {
    const m = pattern.exec(n);
    return m !== null && Number(m[1]) !== process.pid && !alive(Number(m[1]));
  });
  for (const n of stale) spawnSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
  return stale;
}
