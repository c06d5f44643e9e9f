// The benchmark's live bridge for `diff --backend ovs`: a private ovsdb-server and
// ovs-vswitchd (dummy datapath, --disable-system) in a temporary directory, the compiled
// bundle loaded into it, and what `ovs-ofctl -O OpenFlow15 --no-stats dump-flows` and
// `dump-groups` print, written beside the other cached inputs. Only the daemons started
// here are stopped, by their pid files.
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const DAEMONS = ['ovs-vswitchd', 'ovsdb-server'];

function stop(dir) {
  for (const d of DAEMONS) {
    const pidFile = path.join(dir, `${d}.pid`);
    if (!fs.existsSync(pidFile)) continue;
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    const cmdline = fs.existsSync(`/proc/${pid}/cmdline`) ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
    if (pid > 1 && cmdline.includes(dir)) process.kill(pid, 'SIGTERM');
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Loads the bundle into a fresh bridge: load seconds, and the dump files (cached by the bundle's hash). */
export function ovsLoad(cacheDir, size, bundleFile) {
  const hash = createHash('sha256').update(fs.readFileSync(bundleFile)).digest('hex');
  const flows = path.join(cacheDir, `ovs-flows-${size}.txt`);
  const groups = path.join(cacheDir, `ovs-groups-${size}.txt`);
  const meta = path.join(cacheDir, `ovs-load-${size}.json`);
  if (fs.existsSync(meta) && fs.existsSync(flows) && fs.existsSync(groups)) {
    const m = JSON.parse(fs.readFileSync(meta, 'utf8'));
    if (m.hash === hash) return { ...m, flows, groups };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-ovs-bench-'));
  const env = { ...process.env, OVS_RUNDIR: dir, OVS_DBDIR: dir, OVS_LOGDIR: dir, OVS_PKGDATADIR: dir, OVS_SYSCONFDIR: dir };
  const run = (tool, args) => execFileSync(tool, args, { env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  const common = (d) => [`--pidfile=${dir}/${d}.pid`, `--unixctl=${dir}/${d}.ctl`, `--log-file=${dir}/${d}.log`, '-vconsole:off', '--detach', '--no-chdir'];
  const db = `unix:${dir}/db.sock`;
  try {
    fs.copyFileSync('/usr/share/openvswitch/vswitch.ovsschema', path.join(dir, 'vswitch.ovsschema'));
    run('ovsdb-tool', ['create', `${dir}/conf.db`, `${dir}/vswitch.ovsschema`]);
    run('ovsdb-server', [`${dir}/conf.db`, `--remote=punix:${dir}/db.sock`, ...common('ovsdb-server')]);
    run('ovs-vsctl', [`--db=${db}`, '--no-wait', 'init']);
    run('ovs-vswitchd', [db, '--enable-dummy', '--disable-system', ...common('ovs-vswitchd')]);
    run('ovs-vsctl', [`--db=${db}`, 'add-br', 'br-int', '--', 'set', 'bridge', 'br-int', 'datapath_type=dummy', 'fail-mode=secure', 'protocols=OpenFlow15']);
    const t = process.hrtime.bigint();
    run('ovs-ofctl', ['-O', 'OpenFlow15', 'bundle', 'br-int', bundleFile]);
    const loadSeconds = Number(process.hrtime.bigint() - t) / 1e9;
    for (const [file, args] of [
      [flows, ['--no-stats', 'dump-flows', 'br-int']],
      [groups, ['dump-groups', 'br-int']],
    ]) {
      const r = spawnSync('ovs-ofctl', ['-O', 'OpenFlow15', ...args], { env, maxBuffer: 1 << 30 });
      if (r.status !== 0) throw new Error(`ovs-ofctl ${args.join(' ')} failed: ${r.stderr}`);
      fs.writeFileSync(file, r.stdout);
    }
    const m = { hash, loadSeconds };
    fs.writeFileSync(meta, JSON.stringify(m));
    return { ...m, flows, groups };
  } finally {
    stop(dir);
  }
}
