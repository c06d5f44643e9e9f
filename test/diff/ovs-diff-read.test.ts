// The ovs diff without a bridge: the dump reader on lines as OVS 3.1 prints them (with and
// without counters, default priority, no cookie, flags), listings it cannot read (exit 2
// with the line and column, no bundle), and the command's options and exit codes, against
// dumps made by the canonical printer (which
// test/backends/ovs/ovs-canonical.system.test.ts holds to what OVS prints).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileOvsProgram } from '../../src/backends/ovs/index.js';
import { loadModel } from '../../src/compile.js';
import { UserInputError, formatDiagnostic } from '../../src/diag/diagnostic.js';
import { canonicalFlowLine, canonicalGroupLine } from '../../src/ovs/dump-form.js';
import { readFlowDump, readGroupDump } from '../../src/live/ovs/dump-read.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { tempFiles } from '../helpers/diff-nft.js';
import { kproxc } from '../helpers/kproxc.js';

function readError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof UserInputError) return e.diagnostics.map(formatDiagnostic).join('\n');
    throw e;
  }
  throw new Error('no error');
}

describe('the dump reader', () => {
  it('reads a line with and without counters to the same flow', () => {
    const [a] = readFlowDump(' cookie=0x1030000000009, table=14, hard_timeout=300, priority=200,tcp,nw_src=198.18.0.7,nw_dst=10.96.0.30,tp_dst=80 actions=set_field:0x1f40/0xffff->reg4\n', 'f');
    const [b] = readFlowDump(
      'OFPST_FLOW reply (OF1.5) (xid=0x6):\n cookie=0x1030000000009, duration=1.090s, table=14, n_packets=0, n_bytes=0, hard_timeout=300, idle_age=1, priority=200,tcp,nw_src=198.18.0.7,nw_dst=10.96.0.30,tp_dst=80 actions=set_field:0x1f40/0xffff->reg4\n',
      'f',
    );
    expect(b).toEqual({ ...a, line: 2 });
    expect(a).toMatchObject({ cookie: '0x1030000000009', table: 14, priority: 200, hardTimeout: 300, match: 'tcp,nw_src=198.18.0.7,nw_dst=10.96.0.30,tp_dst=80' });
  });

  it('reads what OVS leaves out: table 0, a zero cookie, the default priority, an empty match, flags', () => {
    const flows = readFlowDump(
      [
        ' cookie=0x1030000000000, priority=0 actions=NORMAL',
        ' table=31, tcp actions=drop',
        ' table=32, actions=drop',
        ' table=33, idle_timeout=5, hard_timeout=9, send_flow_rem importance=3, priority=1 actions=drop',
      ].join('\n'),
      'f',
    );
    expect(flows.map((f) => [f.cookie, f.table, f.priority, f.key, f.actions])).toEqual([
      ['0x1030000000000', 0, 0, 'priority=0', 'NORMAL'],
      ['0', 31, 32768, 'priority=32768,tcp', 'drop'],
      ['0', 32, 32768, 'priority=32768', 'drop'],
      ['0', 33, 1, 'priority=1', 'drop'],
    ]);
  });

  it('refuses what is not a dump-flows line, with its line and column', () => {
    expect(readError(() => readFlowDump(' cookie=0x1, priority=1 actions=drop\nhello\n', 'flows.txt'))).toBe('flows.txt:2:1: "hello": not a line of ovs-ofctl dump-flows');
    expect(readError(() => readFlowDump(' cookie=0xZZ, table=1, priority=1 actions=drop', 'flows.txt'))).toMatch(/^flows\.txt:1:2: cookie "0xZZ": not a cookie/);
    expect(readError(() => readFlowDump(' table=1, priority=1,tcp', 'flows.txt'))).toMatch(/^flows\.txt:1:11: a flow without actions=/);
    expect(readError(() => readFlowDump(' table=1, priority=99999 actions=drop', 'flows.txt'))).toMatch(/^flows\.txt:1:\d+: priority "99999": not a priority/);
  });

  it('reads groups, and refuses a group ovs-ofctl could not print, a repeated group, or a stray line', () => {
    const g = readGroupDump('OFPST_GROUP_DESC reply (OF1.5) (xid=0x2): flags=[more]\n group_id=8,type=select,bucket=bucket_id:0,weight:100,actions=set_field:0x4000/0x4000->reg0,resubmit(,16)\n', 'g');
    expect(g).toEqual([{ line: 2, id: 8, text: 'group_id=8,type=select,bucket=bucket_id:0,weight:100,actions=set_field:0x4000/0x4000->reg0,resubmit(,16)' }]);
    expect(readError(() => readGroupDump('OFPST_GROUP_DESC reply (OF1.5) (xid=0x2): ***decode error: OFPGMFC_BAD_BUCKET***\n', 'g.txt'))).toMatch(/^g\.txt:1:43: ovs-ofctl could not print a group here/);
    expect(readError(() => readGroupDump(' group_id=8,type=select\n group_id=8,type=select\n', 'g.txt'))).toBe('g.txt:2:2: group 8 is listed twice');
    expect(readError(() => readGroupDump('cookie=1\n', 'g.txt'))).toBe('g.txt:1:1: "cookie=1": not a line of ovs-ofctl dump-groups');
  });
});

/** The dumps OVS prints for a compiled snapshot (the canonical printer's lines). */
function dumpsOf(file: string): { flows: string; groups: string } {
  const model = loadModel([{ name: file, text: fs.readFileSync(file, 'utf8') }], {});
  const p = compileOvsProgram(model.families, []);
  return { flows: p.flows.map((f) => ` ${canonicalFlowLine(f.flow)}\n`).join(''), groups: p.groups.map((g) => ` ${canonicalGroupLine(g)}\n`).join('') };
}

describe('kproxc diff --backend ovs', () => {
  const files = tempFiles('ovs-cli');
  const snap = path.join(FIXTURES, 'session-affinity.yaml');
  const d = dumpsOf(snap);
  const flows = files.write('flows.txt', d.flows);
  const groups = files.write('groups.txt', d.groups);
  const ovs = (args: string[], stdin = '') => kproxc(['diff', '--backend', 'ovs', ...args], stdin);

  it('an unchanged bridge: nothing on standard output, exit 0 with --exit-code', async () => {
    expect(await ovs(['--live-flows', flows, '--live-groups', groups, snap, '--exit-code'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('a changed bridge: the bundle, exit 1 with --exit-code, 0 without; -o writes it; - reads standard input', async () => {
    const other = path.join(FIXTURES, 'clusterip.yaml');
    const withFlag = await ovs(['--live-flows', flows, '--live-groups', groups, other, '--exit-code']);
    expect(withFlag.code).toBe(1);
    expect(withFlag.stdout).toMatch(/^flow delete_strict table=15,/m);
    expect(withFlag.stdout).not.toMatch(/^flow delete$|group_id=all/m);
    const without = await ovs(['--live-flows', '-', '--live-groups', groups, other], d.flows);
    expect(without).toEqual({ ...withFlag, code: 0 });
    const out = path.join(files.dir, 'out.ofctl');
    expect((await ovs(['--live-flows', flows, '--live-groups', groups, other, '-o', out])).stdout).toBe('');
    expect(fs.readFileSync(out, 'utf8')).toBe(withFlag.stdout);
  });

  it('names flows and groups that are not ours on standard error and leaves them alone', async () => {
    const f = files.write('foreign.txt', d.flows + ' cookie=0x42, table=30, priority=5,tcp,tp_dst=22 actions=NORMAL\n');
    const g = files.write('foreign-groups.txt', d.groups + ' group_id=77,type=all,bucket=bucket_id:0,actions=NORMAL\n');
    const r = await ovs(['--live-flows', f, '--live-groups', g, snap]);
    expect(r.stdout).toBe('');
    const line = d.flows.split('\n').length;
    // Sorted by file name, as every diagnostic is.
    expect(r.stderr).toBe(
      `${g}:${d.groups.split('\n').length}:1: warning: group 77 is not kproxc's; left alone\n` +
        `${f}:${line}:1: warning: table 30 flow priority=5,tcp,tp_dst=22 (cookie 0x42) is not kproxc's; left alone\n`,
    );
  });

  it('a listing it cannot read: exit 2, the position, no bundle', async () => {
    const bad = files.write('bad.txt', d.flows + ' cookie=0x1030000000000, table=15, priority=1,tcp\n');
    const out = path.join(files.dir, 'untouched.ofctl');
    fs.writeFileSync(out, 'before');
    const r = await ovs(['--live-flows', bad, '--live-groups', groups, snap, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${d.flows.split('\n').length}:\\d+: a flow without actions=`));
    expect(fs.readFileSync(out, 'utf8')).toBe('before');
  });

  it('usage: both dumps needed, one standard input, --live is nftables only', async () => {
    expect(await ovs(['--live-flows', flows, snap])).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/--backend ovs needs --live-flows FILE and --live-groups FILE/) });
    expect(await ovs(['--live-flows', '-', '--live-groups', '-', snap])).toMatchObject({ code: 2, stderr: expect.stringMatching(/only one of --live-flows, --live-groups and the snapshot/) });
    expect(await ovs(['--live', flows, '--live-flows', flows, '--live-groups', groups, snap])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--live is the nftables listing/) });
    expect(await ovs(['--live-flows', path.join(files.dir, 'missing'), '--live-groups', groups, snap])).toMatchObject({ code: 2, stderr: expect.stringMatching(/missing:1:1: no such file or directory/) });
    expect(await kproxc(['diff', '--live-flows', flows, '--live-groups', groups, snap])).toMatchObject({ code: 2, stdout: '', stderr: 'kproxc: --live-flows and --live-groups need --backend ovs\n' });
  });
});
