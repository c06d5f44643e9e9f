// A private Open vSwitch for system tests: its own ovsdb-server and ovs-vswitchd (userspace
// datapaths only, --disable-system) in a fresh /tmp/kproxc-ovs-* directory, with every
// socket, pid file, log and database inside it. Nothing here talks to the system's ovsdb
// or /var/run/openvswitch, and only the daemons this helper started are stopped, by pid.
// The default bridge uses the dummy datapath with in-memory ports; the `netdev` datapath
// with real devices runs ovs-vswitchd inside a network namespace of the test, so the
// devices it creates (internal ports are tap devices) appear there and nowhere else.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

const SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';
/**
 * The longest any OVS tool may run. ovs-vsctl waits for ovs-vswitchd and ovs-appctl for its
 * target, without limit by default; a synchronous call that never returns would hang the
 * test worker past every vitest timeout, and its cleanup with it.
 */
const TOOL_TIMEOUT_MS = 60_000;
const DAEMONS = ['ovs-vswitchd', 'ovsdb-server'] as const;

export const BRIDGE = 'br-int';
/** Dummy ports on the bridge, OpenFlow port numbers 1..N. */
export const PORTS = ['p1', 'p2', 'p3'];

export interface OvsOptions {
  /** `dummy` (default): dummy ports PORTS, no devices. `netdev`: no ports; add real ones. */
  datapath?: 'dummy' | 'netdev';
  /** The network namespace ovs-vswitchd runs in (for `netdev`: where its devices live). */
  netns?: string;
  /** Names the directory /tmp/kproxc-ovs-<tag>-<pid>-*, so removeStaleOvs(tag) finds it. */
  tag?: string;
}

export interface Ovs {
  dir: string;
  /** This instance's environment for OVS tools (OVS_RUNDIR and the like point into dir). */
  env: NodeJS.ProcessEnv;
  /** Runs an OVS tool with this instance's environment; throws with stderr on failure. */
  run(tool: string, args: string[]): string;
  vsctl(args: string[]): string;
  ofctl(args: string[]): string;
  appctl(args: string[]): string;
  loadBundle(text: string): void;
  /** dump-flows and dump-groups without counters and durations, sorted. */
  dump(): { flows: string[]; groups: string[] };
  trace(flow: string): string;
  /** Injects packets (datapath flow keys) as if they arrived on a dummy port, in order. */
  receive(port: string, packets: string[]): void;
}

function envFor(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin`,
    OVS_RUNDIR: dir,
    OVS_DBDIR: dir,
    OVS_LOGDIR: dir,
    OVS_PKGDATADIR: dir,
    OVS_SYSCONFDIR: dir,
  };
}

/** Counters and timers differ between dumps of the same state. */
const VOLATILE = /\s*(duration|n_packets|n_bytes|idle_age|hard_age|reset_counts)=[^,\s]*,?/g;

function normalized(dump: string): string[] {
  return dump
    .split('\n')
    .filter((l) => l.startsWith(' '))
    .map((l) => l.replace(VOLATILE, ' ').replace(/\s+/g, ' ').trim())
    .sort();
}

/** Blocks for ms milliseconds (the helpers are synchronous, like the tools they run). */
export function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Injected packets wait in the dummy port's queue until the datapath thread takes them, so
 * what they cause (conntrack entries, learned flows) is polled for, up to a few seconds.
 */
export function eventually<T>(read: () => T, done: (v: T) => boolean): T {
  const deadline = Date.now() + 5000;
  let v = read();
  while (!done(v) && Date.now() < deadline) {
    sleepMs(20);
    v = read();
  }
  return v;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the daemons whose pid files are in dir (only if the pid still runs a command naming dir). */
function stopDaemons(dir: string): void {
  for (const d of DAEMONS) {
    const pidFile = path.join(dir, `${d}.pid`);
    if (!fs.existsSync(pidFile)) continue;
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 1 || !pidAlive(pid)) continue;
    const cmdline = fs.existsSync(`/proc/${pid}/cmdline`) ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
    if (!cmdline.includes(dir)) continue; // the pid was reused by something that is not ours
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 5000;
    while (pidAlive(pid) && Date.now() < deadline) sleepMs(20);
    if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  }
}

export function startOvs(options: OvsOptions = {}): Ovs & { stop(): void } {
  const { datapath = 'dummy', netns, tag } = options;
  const dir = fs.mkdtempSync(tag ? `/tmp/kproxc-ovs-${tag}-${process.pid}-` : '/tmp/kproxc-ovs-');
  const env = envFor(dir);
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(tool, args, { env, encoding: 'utf8', maxBuffer: 1 << 30, timeout: TOOL_TIMEOUT_MS, killSignal: 'SIGKILL' });
    if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${r.status ?? r.error}): ${r.stderr}`);
    return r.stdout;
  };
  const stop = () => {
    try {
      stopDaemons(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  const db = `unix:${dir}/db.sock`;
  const vsctl = (args: string[]) => run('ovs-vsctl', [`--db=${db}`, ...args]);
  const common = (d: string) => [`--pidfile=${dir}/${d}.pid`, `--unixctl=${dir}/${d}.ctl`, `--log-file=${dir}/${d}.log`, '-vconsole:off', '--detach', '--no-chdir'];
  try {
    fs.copyFileSync(SCHEMA, path.join(dir, 'vswitch.ovsschema'));
    run('ovsdb-tool', ['create', `${dir}/conf.db`, `${dir}/vswitch.ovsschema`]);
    run('ovsdb-server', [`${dir}/conf.db`, `--remote=punix:${dir}/db.sock`, ...common('ovsdb-server')]);
    vsctl(['--no-wait', 'init']);
    const vswitchd = [db, ...(datapath === 'dummy' ? ['--enable-dummy'] : []), '--disable-system', ...common('ovs-vswitchd')];
    // `ip netns exec` execs in place and the daemon detaches from there: it stays in netns.
    if (netns) run('ip', ['netns', 'exec', netns, 'ovs-vswitchd', ...vswitchd]);
    else run('ovs-vswitchd', vswitchd);
    vsctl(['add-br', BRIDGE, '--', 'set', 'bridge', BRIDGE, `datapath_type=${datapath}`, 'fail-mode=secure', 'protocols=OpenFlow10,OpenFlow13,OpenFlow15']);
    if (datapath === 'dummy') PORTS.forEach((p, i) => vsctl(['add-port', BRIDGE, p, '--', 'set', 'Interface', p, 'type=dummy', `ofport_request=${i + 1}`]));
  } catch (e) {
    stop();
    throw e;
  }
  const ofctl = (args: string[]) => run('ovs-ofctl', ['-O', 'OpenFlow15', ...args]);
  const appctl = (args: string[]) => run('ovs-appctl', ['-t', `${dir}/ovs-vswitchd.ctl`, ...args]);
  return {
    dir,
    env,
    run,
    vsctl,
    ofctl,
    appctl,
    loadBundle: (text) => {
      const file = path.join(dir, 'bundle.ofctl');
      fs.writeFileSync(file, text);
      ofctl(['bundle', BRIDGE, file]);
    },
    dump: () => ({ flows: normalized(ofctl(['dump-flows', BRIDGE])), groups: normalized(ofctl(['dump-groups', BRIDGE])) }),
    trace: (flow) => appctl(['ofproto/trace', BRIDGE, flow]),
    receive: (port, packets) => void appctl(['netdev-dummy/receive', port, ...packets]),
    stop,
  };
}

/**
 * Stops the daemons and removes the directories of OVS instances started with `tag` by
 * processes that no longer run (a run killed outright cannot stop its detached daemons).
 * Returns the directories removed.
 */
export function removeStaleOvs(tag: string): string[] {
  const pattern = new RegExp(`^kproxc-ovs-${tag}-(\\d+)-`);
  const stale = fs
    .readdirSync('/tmp')
    .filter((n) => {
      const m = pattern.exec(n);
      return m !== null && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]));
    })
    .map((n) => path.join('/tmp', n));
  for (const dir of stale) {
    stopDaemons(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return stale;
}

/** Runs fn with a fresh private OVS and always stops it. */
export async function withOvs<T>(fn: (ovs: Ovs) => T | Promise<T>): Promise<T> {
  const ovs = startOvs();
  try {
    return await fn(ovs);
  } finally {
    ovs.stop();
  }
}

/**
 * A private Open vSwitch for the describe block that calls this: started before its tests,
 * stopped after them. The getter fails a test that runs when it could not start.
 */
export function ovsForSuite(options: OvsOptions = {}): () => Ovs {
  let ovs: (Ovs & { stop(): void }) | undefined;
  beforeAll(() => {
    ovs = startOvs(options);
  });
  afterAll(() => ovs?.stop());
  return () => {
    if (!ovs) throw new Error('Open vSwitch did not start');
    return ovs;
  };
}
