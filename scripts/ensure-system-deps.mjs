#!/usr/bin/env node
// The system tests load our output into real nftables and a real Open vSwitch. When the
// tools are missing this installs them (Debian packages, as root); otherwise it fails and
// says how. It never lets the suite skip them silently. With --bench it also wants GNU
// time, which the benchmark reads peak memory from.
import { execFileSync, spawnSync } from 'node:child_process';

const forBench = process.argv.includes('--bench');

const needed = [
  { bin: 'nft', pkg: 'nftables' },
  { bin: 'ovs-vswitchd', pkg: 'openvswitch-switch' },
  { bin: 'ovs-ofctl', pkg: 'openvswitch-switch' },
  { bin: 'conntrack', pkg: 'conntrack' },
  { bin: 'ip', pkg: 'iproute2' },
  { bin: 'unshare', pkg: 'util-linux' },
  ...(forBench ? [{ bin: '/usr/bin/time', pkg: 'time' }] : []),
];

const has = (bin) =>
  spawnSync('sh', ['-c', `command -v ${bin} || test -x /usr/sbin/${bin} || test -x /sbin/${bin}`], { stdio: 'ignore' }).status === 0;

const missing = [...new Set(needed.filter((n) => !has(n.bin)).map((n) => n.pkg))];
if (missing.length === 0) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot) {
  console.error(`kproxc ${forBench ? 'benchmark' : 'tests'} needs ${missing.join(', ')}: run as root, or install them with: apt-get install -y ${missing.join(' ')}`);
  process.exit(1);
}
console.error(`installing ${missing.join(', ')} for the ${forBench ? 'benchmark' : 'system tests'}`);
try {
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
} catch (e) {
  console.error(`could not install ${missing.join(', ')}: ${e.message}`);
  process.exit(1);
}
