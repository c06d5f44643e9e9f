// A private Open vSwitch for system tests: its own ovsdb-server and ovs-vswitchd (dummy
// datapath only, --disable-system) in a fresh /tmp/kproxc-ovs-* directory, with every
// socket, pid file, log and database inside it. Nothing here talks to the system's ovsdb
// or /var/run/openvswitch, and only the daemons this helper started are stopped, by pid.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';
const DAEMONS = ['ovs-vswitchd', 'ovsdb-server'] as const;

export const BRIDGE = 'br-int';
/** Dummy ports on the bridge, OpenFlow port numbers 1..N. */
export const PORTS = ['p1', 'p2', 'p3'];

export interface Ovs {
  dir: string;
  /** Runs an OVS tool with this instance's environment; throws with stderr on failure. */
  run(tool: string, args: string[]): string;
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

export function startOvs(): Ovs & { stop(): void } {
  const dir = fs.mkdtempSync('/tmp/kproxc-ovs-');
  const env = envFor(dir);
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(tool, args, { env, encoding: 'utf8', maxBuffer: 1 << 30 });
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
    run('ovs-vswitchd', [db, '--enable-dummy', '--disable-system', ...common('ovs-vswitchd')]);
    vsctl(['add-br', BRIDGE, '--', 'set', 'bridge', BRIDGE, 'datapath_type=dummy', 'fail-mode=secure', 'protocols=OpenFlow10,OpenFlow13,OpenFlow15']);
    PORTS.forEach((p, i) => vsctl(['add-port', BRIDGE, p, '--', 'set', 'Interface', p, 'type=dummy', `ofport_request=${i + 1}`]));
  } catch (e) {
    stop();
    throw e;
  }
  const ofctl = (args: string[]) => run('ovs-ofctl', ['-O', 'OpenFlow15', ...args]);
  const appctl = (args: string[]) => run('ovs-appctl', ['-t', `${dir}/ovs-vswitchd.ctl`, ...args]);
  return {
    dir,
    run,
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

/** Runs fn with a fresh private OVS and always stops it. */
export async function withOvs<T>(fn: (ovs: Ovs) => T | Promise<T>): Promise<T> {
  const ovs = startOvs();
  try {
    return await fn(ovs);
  } finally {
    ovs.stop();
  }
}
