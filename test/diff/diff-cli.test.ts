// `kproxc diff` as a command: outputs, exit codes, and bad input (exit 2, a clear message,
// no output, no stack trace). The golden cases themselves are in diff-cases.system.test.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIFF_FIXTURES } from '../helpers/diff-cases.js';
import { tempDir, tempFiles } from '../helpers/diff-nft.js';
import { kproxc, kproxcProcess } from '../helpers/kproxc.js';

/** The fixtures' live tables are kube-proxy 1.35's: compared with its table, without the release read from them. */
const V135 = ['--kube-proxy-version', '1.35'];

const snap = (name: string) => path.join(DIFF_FIXTURES, `${name}.yaml`);
const live = (name: string) => path.join(DIFF_FIXTURES, `${name}.live.json`);
const rel = (p: string) => path.relative(path.join(DIFF_FIXTURES, '../..'), p);

describe('kproxc diff', () => {
  it('an unchanged cluster prints nothing at all; --exit-code says 0', () => {
    const r = kproxcProcess(['diff', ...V135, rel(snap('unchanged')), '--live', rel(live('unchanged')), '--exit-code']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('--layout fast-load, the same table in every release, reads no release from the live table', async () => {
    const r = await kproxc(['diff', '--layout', 'fast-load', snap('unchanged'), '--live', live('unchanged')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toBe('');
  });

  it('without a release from the flag or the Node, reads it from the live table and says so', () => {
    const r = kproxcProcess(['diff', rel(snap('unchanged')), '--live', rel(live('unchanged')), '--exit-code']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe(
      "kproxc: kube-proxy 1.35, read from the live table (a mark-for-masquerade chain); --kube-proxy-version or the Node's version chooses another\n",
    );
  });

  it('--exit-code says 1 when there is something to do; without it, 0', () => {
    const withFlag = kproxcProcess(['diff', rel(snap('endpoint-added')), '--live', rel(live('endpoint-added')), '--exit-code']);
    expect(withFlag.code).toBe(1);
    expect(withFlag.stdout.split('\n')).toHaveLength(6);
    const without = kproxcProcess(['diff', rel(snap('endpoint-added')), '--live', rel(live('endpoint-added'))]);
    expect(without.code).toBe(0);
    expect(without.stdout).toBe(withFlag.stdout);
  });

  it('reads the live listing from standard input', async () => {
    const r = await kproxc(['diff', ...V135, snap('endpoint-added'), '--live', '-'], fs.readFileSync(live('endpoint-added'), 'utf8'));
    const f = await kproxc(['diff', ...V135, snap('endpoint-added'), '--live', live('endpoint-added')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(f.stdout);
  });

  it('-o and --two-phase write their files; an empty diff writes empty files', async () => {
    const dir = tempDir('cli');
    try {
      const out = path.join(dir, 'now.nft');
      const later = path.join(dir, 'later.nft');
      const r = await kproxc(['diff', ...V135, snap('service-removed'), '--live', live('service-removed'), '-o', out, '--two-phase', later, '--exit-code']);
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: '' });
      expect(fs.readFileSync(out, 'utf8')).toMatch(/^delete element ip kube-proxy cluster-ips \{ 172\.30\.0\.42 \}\n/);
      expect(fs.readFileSync(out, 'utf8')).not.toContain('delete chain');
      expect(fs.readFileSync(later, 'utf8').split('\n').filter(Boolean).every((l) => l.startsWith('delete chain ip kube-proxy '))).toBe(true);
      const e = await kproxc(['diff', ...V135, snap('unchanged'), '--live', live('unchanged'), '-o', out, '--two-phase', later, '--exit-code']);
      expect(e).toMatchObject({ code: 0, stdout: '', stderr: '' });
      expect(fs.readFileSync(out, 'utf8')).toBe('');
      expect(fs.readFileSync(later, 'utf8')).toBe('');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--conntrack writes its script, empty when nothing is stale; with --backend ovs, flush-conntrack commands', async () => {
    const dir = tempDir('conntrack');
    try {
      const ct = path.join(dir, 'conntrack.sh');
      fs.writeFileSync(ct, 'old\n');
      const r = await kproxc(['diff', ...V135, snap('unchanged'), '--live', live('unchanged'), '--conntrack', ct]);
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
      expect(fs.readFileSync(ct, 'utf8')).toBe('');
      // An empty bridge translated nothing: every UDP Service address with endpoints is cleared of untranslated entries.
      const empty = path.join(dir, 'empty');
      fs.writeFileSync(empty, '');
      fs.writeFileSync(ct, 'old\n');
      const ovs = await kproxc(['diff', '--backend', 'ovs', '--live-flows', empty, '--live-groups', empty, snap('unchanged'), '--conntrack', ct]);
      expect(ovs.code, ovs.stderr).toBe(0);
      const lines = fs.readFileSync(ct, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(l).toMatch(/^ovs-appctl dpctl\/flush-conntrack zone=655[12]0 ct_nw_proto=17,(ct_(nw|ipv6)_dst=[0-9a-f.:]+,)?ct_tp_dst=\d+ ct_(nw|ipv6)_src=[0-9a-f.:]+$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--table picks the table: a listing without it means the full ruleset', async () => {
    const r = await kproxc(['diff', ...V135, snap('unchanged'), '--live', live('unchanged'), '--table', 'other']);
    expect(r.stdout.split('\n')[0]).toBe('add table ip other { comment "rules for kube-proxy" ; }');
  });

  it('repairs a rule changed by hand to something kproxc does not write', async () => {
    const dir = tempDir('foreign');
    try {
      const f = path.join(dir, 'counter-rule.json');
      const text = fs.readFileSync(live('unchanged'), 'utf8');
      const changed = text.replace('{"reject": {"type": "icmp", "expr": "port-unreachable"}}', '{"counter": {"packets": 0, "bytes": 0}}');
      expect(changed).not.toBe(text);
      fs.writeFileSync(f, changed);
      const r = await kproxc(['diff', ...V135, snap('unchanged'), '--live', f]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/cluster-ips-check/);
      expect(r.stdout).toMatch(/reject comment "Reject traffic to invalid ports of ClusterIPs"/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('bad input: exit 2, a message, nothing on standard output', () => {
    const { dir, write } = tempFiles('bad');
    const cases: [string, () => string[], RegExp][] = [
      ['a missing live file', () => ['--live', path.join(dir, 'nope.json')], /nope\.json:1:1: no such file or directory\n$/],
      ['a directory', () => ['--live', dir], /kproxc-diff-bad-\w+:1:1: is a directory\n$/],
      ['text instead of JSON', () => ['--live', write('text.nft', 'table ip kube-proxy {\n}\n')], /text\.nft:1:1: not a listing from `nft -j list ruleset`: expected '\{' \(this looks like `nft list ruleset` text; use `nft -j list ruleset`\)\n$/],
      ['broken JSON', () => ['--live', write('broken.json', '{"nftables": [{"table": {"family": "ip", "name": "kube-proxy", "handle": 1}')], /broken\.json:1:76: not a listing from `nft -j list ruleset`: the input ends early: expected the end of an object\n$/],
      [
        'an object we do not understand inside our table',
        () => [
          '--live',
          write(
            'counter.json',
            // A named counter object listed inside our table, after everything else.
            fs
              .readFileSync(live('unchanged'), 'utf8')
              .replace(/\]\}\s*$/, ', {"counter": {"family": "ip", "name": "hits", "table": "kube-proxy", "handle": 999, "packets": 0, "bytes": 0}}]}'),
          ),
        ],
        /counter\.json:1:\d+: counter hits: a counter in table ip kube-proxy is not something kproxc writes; kproxc cannot diff a table holding this \(replace it with `kproxc compile`\)\n/,
      ],
      ['standard input twice', () => ['--live', '-', '-'], /^kproxc: --live - and a snapshot from standard input cannot both read standard input\n$/],
      ['no --live', () => [], /required option '--live <file>' not specified/],
    ];
    for (const [what, args, message] of cases) {
      it(what, async () => {
        const r = await kproxc(['diff', ...V135, snap('unchanged'), ...args()], '');
        expect(r.code).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(message);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      });
    }
  });
});
