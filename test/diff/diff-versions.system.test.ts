// Moving a live node between kube-proxy releases on the real kernel: the diff from a 1.35
// table to a 1.37 snapshot (and back, and through 1.36) is the upgrade's transaction, not a
// rebuild; applied, it converges; and the clients an affinity set remembers for endpoints
// that remain are still remembered after it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KubeProxyVersion } from '../../src/model/kube-proxy-version.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { kproxc } from '../helpers/kproxc.js';
import { canonicalListing, withNetns, type Netns } from '../helpers/netns.js';

const SNAPSHOT = path.join(FIXTURES, 'kube-proxy-overall.yaml');
// ns5/svc5 has ClientIP affinity and one endpoint, 10.180.0.3:80.
const AFFINITY_SET = 'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80';
const CLIENT = '203.0.113.77';

async function run(args: string[], stdin = ''): Promise<{ stdout: string; stderr: string }> {
  const r = await kproxc(args, stdin);
  expect(r.code, r.stderr).toBe(0);
  return r;
}

const compileFor = async (version: KubeProxyVersion) => (await run(['compile', SNAPSHOT, '--kube-proxy-version', version])).stdout;

/** diff of the namespace's ruleset to the snapshot's table of `version` (or of the release the live table shows). */
async function diffTo(ns: Netns, version?: KubeProxyVersion): Promise<{ stdout: string; stderr: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-dv-'));
  try {
    const live = path.join(dir, 'live.json');
    fs.writeFileSync(live, ns.nft(['-j', 'list', 'ruleset']));
    return await run(['diff', SNAPSHOT, '--live', live, ...(version ? ['--kube-proxy-version', version] : [])]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const remembered = (ns: Netns) => ns.nft(['list', 'set', 'ip', 'kube-proxy', AFFINITY_SET]).includes(CLIENT);

describe('diff between kube-proxy releases', () => {
  it('upgrades a live 1.35 table to 1.37 with the upgrade\'s transaction, keeps remembered clients, and converges', async () => {
    await withNetns('dv', async (ns) => {
      ns.nft(['-f', '-'], await compileFor('1.35'));
      ns.nft(['add', 'element', 'ip', 'kube-proxy', AFFINITY_SET, `{ ${CLIENT} }`]);
      const tx = (await diffTo(ns, '1.37')).stdout;
      // Not a rebuild: no table or affinity set is flushed or deleted, the endpoint chains
      // of Services without affinity and mark-for-masquerade go, the hairpin set comes.
      expect(tx).not.toMatch(/(delete|flush) table/);
      expect(tx).not.toMatch(/(delete|flush) set ip kube-proxy affinity-/);
      expect(tx).toContain('delete chain ip kube-proxy mark-for-masquerade');
      expect(tx).toContain('delete chain ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
      expect(tx).toContain('add set ip kube-proxy hairpin-connections');
      expect(tx).toContain('add element ip kube-proxy hairpin-connections { 10.180.0.5 . 10.180.0.5 . tcp . 80 }');
      expect(tx.trim().split('\n').length).toBeLessThan((await compileFor('1.37')).trim().split('\n').length);
      ns.nft(['-f', '-'], tx);
      expect(remembered(ns)).toBe(true);
      expect((await diffTo(ns, '1.37')).stdout).toBe('');
      // And it is the table a 1.37 compile loads (nft lists sets in the order made: compared sorted).
      ns.nft(['delete', 'element', 'ip', 'kube-proxy', AFFINITY_SET, `{ ${CLIENT} }`]);
      const upgraded = canonicalListing(ns.nft(['-j', 'list', 'ruleset']));
      ns.nft(['-f', '-'], await compileFor('1.37'));
      expect(canonicalListing(ns.nft(['-j', 'list', 'ruleset']))).toEqual(upgraded);
    });
  });

  it('moves between every two releases and converges, reading the live release when none is given', async () => {
    await withNetns('dv', async (ns) => {
      const releases: KubeProxyVersion[] = ['1.35', '1.36', '1.37'];
      for (const from of releases) {
        for (const to of releases) {
          ns.nft(['-f', '-'], await compileFor(from));
          ns.nft(['-f', '-'], (await diffTo(ns, to)).stdout);
          expect((await diffTo(ns, to)).stdout, `${from} -> ${to}`).toBe('');
          // Without a release from the flag or the Node, the live table's is read and said.
          const read = await diffTo(ns);
          expect(read.stdout, `${from} -> ${to}, read back`).toBe('');
          expect(read.stderr).toContain(`kproxc: kube-proxy ${to}, read from the live table`);
        }
      }
    });
  });
});
