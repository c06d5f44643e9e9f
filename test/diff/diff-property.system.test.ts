// Property test on the real kernel: random cluster histories, in the table of each
// kube-proxy release and in fast-load's, or moving between them from step to step. Load
// the first compile, then for every step diff, apply, and check that the live state lists
// exactly as a fresh load of that step's compile and that a second diff is empty. A foreign table and an affinity
// member added by hand survive every step. A quarter of the histories are the IPv6 twins of
// theirs, a quarter their twins with SCTP ports (test/helpers/cluster-twins.ts): the ip6
// table's forms and SCTP's, listed and diffed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyChange, cloneCluster, historyArb, initialCluster, PINNED, PINNED_MEMBER, snapshot, type Change } from '../helpers/cluster-changes.js';
import { applyAndCheck, compileText, diffAgainst, notOurs, tempDir } from '../helpers/diff-nft.js';
import { createNetns, type Netns } from '../helpers/netns.js';
import { fcParams } from '../helpers/fc-runs.js';
import { ipv6Twin, sctpTwin } from '../helpers/cluster-twins.js';
import { kproxc } from '../helpers/kproxc.js';
import { KUBE_PROXY_VERSIONS, type KubeProxyVersion } from '../../src/model/kube-proxy-version.js';

/** The table a history is diffed in: kube-proxy's as a release programs it, or fast-load's. */
type TableForm = KubeProxyVersion | 'fast-load';
const formArb = fc.constantFrom<TableForm>(...KUBE_PROXY_VERSIONS, 'fast-load');
const formsArb = fc.oneof(
  formArb.map((f) => [f]),
  fc.array(formArb, { minLength: 2, maxLength: 4 }),
);

/** A history's snapshots and the names its tables give them: IPv4, their IPv6 twins, or their SCTP twins. */
interface Family {
  name: string;
  table: 'ip' | 'ip6';
  /** The protocol of the pinned Service's port. */
  proto: 'tcp' | 'sctp';
  snapshot: (c: ReturnType<typeof initialCluster>) => string;
  /** An address as kube-proxy writes it in a chain or set name (an IPv6 address's colons as dots). */
  inName: (ip: string) => string;
  member: string;
}

const IPV4: Family = { name: 'IPv4', table: 'ip', proto: 'tcp', snapshot, inName: (ip) => ip, member: PINNED_MEMBER };
const SCTP: Family = { ...IPV4, name: 'IPv4 with SCTP ports', proto: 'sctp', snapshot: (c) => sctpTwin(snapshot(c)) };
const IPV6: Family = {
  name: 'IPv6',
  table: 'ip6',
  proto: 'tcp',
  snapshot: (c) => ipv6Twin(snapshot(c)),
  inName: (ip) => ipv6Twin(ip).replaceAll(':', '.'),
  member: ipv6Twin(PINNED_MEMBER),
};

/**
 * Where the pinned Service's first endpoint keeps its clients, from the compiled text, and
 * the member that stands for PINNED_MEMBER there: kube-proxy's set of that endpoint, or
 * fast-load's table-wide set, whose key is the client and the endpoint's two constants (as
 * the endpoint's rule updates it in IPv6, as the lookup that DNATs to it reads it in IPv4).
 */
function pinnedAffinity(compiled: string, f: Family): { set: string; member: string } {
  const endpoint = `ns0/svc0/${f.proto}/http__${f.inName('10.128.0.1')}/8080`.replaceAll('.', '\\.');
  const kp = new RegExp(`\\tset (affinity-\\S+${endpoint})`).exec(compiled);
  if (kp) return { set: kp[1], member: f.member };
  const fl =
    new RegExp(`\\tchain endpoint-\\S+${endpoint} \\{\\n\\t\\tupdate @affinity \\{ ${f.table} saddr \\. numgen random mod 1 offset (\\d+) \\. numgen random mod 1 offset (\\d+) `).exec(compiled) ??
    new RegExp(`\\t\\tip saddr \\. numgen random mod 1 offset (\\d+) \\. numgen random mod 1(?: offset (\\d+))? @affinity meta l4proto ${f.proto} dnat to 10\\.128\\.0\\.1:8080\\n`).exec(compiled);
  if (!fl) throw new Error('pinned affinity set missing');
  return { set: 'affinity', member: `${f.member} . ${fl[1]} . ${fl[2] ?? 0}` };
}

const argsOf = (t: TableForm) => (t === 'fast-load' ? ['--layout', 'fast-load'] : ['--kube-proxy-version', t]);

/**
 * One history: the first snapshot loaded in the first form, each step diffed into the next
 * form (the forms taken in turn, so a history may move between releases and layouts).
 */
async function runHistory(live: Netns, fresh: Netns, dir: string, h: { services: number; steps: Change[][]; twoPhase: boolean }, forms: TableForm[], f: Family): Promise<void> {
  live.nft(['flush', 'ruleset']);
  const cluster = initialCluster(h.services);
  const file = path.join(dir, 'snapshot.yaml');
  fs.writeFileSync(file, f.snapshot(cluster));
  const first = await compileText(file, argsOf(forms[0]));
  // A client's affinity survives a diff within kube-proxy's releases or within fast-load,
  // not between them (its state lives in other sets).
  const oneFamily = forms.every((f) => (f === 'fast-load') === (forms[0] === 'fast-load'));
  live.nft(['-f', '-'], 'add table inet foreign\nadd chain inet foreign c\nadd rule inet foreign c tcp dport 22 accept\n');
  live.nft(['-f', '-'], first);
  const pinned = pinnedAffinity(first, f);
  live.nft(['add', 'element', f.table, 'kube-proxy', pinned.set, `{ ${pinned.member} }`]);
  const foreign = notOurs(live.nft(['-j', 'list', 'ruleset']));

  let current = cloneCluster(cluster);
  for (const [i, changes] of h.steps.entries()) {
    const args = argsOf(forms[(i + 1) % forms.length]);
    for (const ch of changes) applyChange(current, ch);
    fs.writeFileSync(file, f.snapshot(current));
    const d = await diffAgainst(live, dir, file, { twoPhase: h.twoPhase, args });
    await applyAndCheck(live, fresh, dir, file, d, args).catch((e) => {
      throw new Error(`step ${i} (${JSON.stringify(changes)}, ${args.join(' ')}):\n${d.now}\n--- later:\n${d.later}\n${(e as Error).message}`);
    });
    expect(notOurs(live.nft(['-j', 'list', 'ruleset'])), 'the foreign table is untouched').toEqual(foreign);
    if (oneFamily) expect(live.nft(['list', 'set', f.table, 'kube-proxy', pinned.set]), 'the hand-added affinity member survives').toContain(f.member);
  }
  expect(current.services[PINNED].affinity).toBe(600);
}

describe('diff converges on real nft over random cluster histories', () => {
  it('every step applies, lists as a fresh load, and re-diffs empty', async () => {
    const live = createNetns('diff');
    const fresh = createNetns('diff');
    const dir = tempDir('prop');
    try {
      // Each history in the table of a random kube-proxy release or in fast-load's, or
      // moving between them from step to step; half of them IPv4, a quarter each twins.
      for (const [f, runs] of [[IPV4, 12], [IPV6, 6], [SCTP, 6]] as const) {
        await fc.assert(
          fc.asyncProperty(historyArb, formsArb, (h, forms) =>
            runHistory(live, fresh, dir, h, forms, f).catch((e: Error) => {
              throw new Error(`${f.name}: ${e.message}`);
            }),
          ),
          { ...fcParams(runs), endOnFailure: true },
        );
      }
    } finally {
      live.destroy();
      fresh.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a live state with no kproxc table gets the full ruleset, and nothing else is touched', async () => {
    const live = createNetns('diff');
    const fresh = createNetns('diff');
    const dir = tempDir('empty');
    try {
      const file = path.join(dir, 'snapshot.yaml');
      fs.writeFileSync(file, snapshot(initialCluster(3)));
      live.nft(['add', 'table', 'ip', 'other']);
      const before = notOurs(live.nft(['-j', 'list', 'ruleset']));
      const args = ['--kube-proxy-version', '1.37'];
      const d = await diffAgainst(live, dir, file, { args });
      expect(d.now.split('\n')[0]).toBe('add table ip kube-proxy { comment "rules for kube-proxy" ; }');
      await applyAndCheck(live, fresh, dir, file, d, args);
      expect(notOurs(live.nft(['-j', 'list', 'ruleset']))).toEqual(before);
      // The same through standard input.
      const r = await kproxc(['diff', file, '--live', '-', '--kube-proxy-version', '1.37'], live.nft(['-j', 'list', 'ruleset']));
      expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    } finally {
      live.destroy();
      fresh.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
