// `diff --layout fast-load` on the real kernel: the members of the table-wide affinity set
// that belong to a removed endpoint are deleted (its clients choose anew if it comes back,
// as with kube-proxy's per-endpoint sets), the others stay, and a member that expires
// between the listing and the transaction does not fail the transaction.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kproxc, ROOT } from '../helpers/kproxc.js';
import { withNetns, type Netns } from '../helpers/netns.js';

const labFile = path.join(ROOT, 'test/dataplane/fast-load-cluster.yaml');
const base = fs.readFileSync(labFile, 'utf8');
// sticky (ClientIP affinity, 60 s) loses 10.180.1.2 of its three endpoints.
const sticky = ['10.180.1.1', '10.180.1.2', '10.180.1.3'];
const changed = base.replace('{addresses: [10.180.1.2], nodeName: node-b}, ', '');
const client = '203.0.113.7';

async function run(args: string[]): Promise<string> {
  const r = await kproxc(args);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** The transaction from the namespace's ruleset to the snapshot's fast-load table. */
async function diffAgainst(ns: Netns, yaml: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-da-'));
  try {
    fs.writeFileSync(path.join(dir, 'live.json'), ns.nft(['-j', 'list', 'ruleset']));
    fs.writeFileSync(path.join(dir, 'cluster.yaml'), yaml);
    return await run(['diff', '--layout', 'fast-load', path.join(dir, 'cluster.yaml'), '--live', path.join(dir, 'live.json')]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Each sticky endpoint's constants, as the loaded lookup that DNATs to it reads them (the member the recording after NAT writes). */
function constants(ns: Netns): Map<string, string> {
  const out = new Map<string, string>();
  const listing = ns.nft(['list', 'table', 'ip', 'kube-proxy']);
  for (const ep of sticky) {
    const lookup = new RegExp(`ip saddr \\. numgen random mod 1 offset (\\d+) \\. numgen random mod 1(?: offset (\\d+))? @affinity meta l4proto tcp dnat to ${ep.replaceAll('.', '\\.')}:8080\n`);
    const m = lookup.exec(listing);
    expect(m, ep).toBeTruthy();
    out.set(ep, `${m![1]} . ${m![2] ?? 0}`);
  }
  return out;
}

/** The members of the table-wide set, as `ADDR . A . B`, sorted. */
function members(ns: Netns): string[] {
  const listing = JSON.parse(ns.nft(['-j', 'list', 'set', 'ip', 'kube-proxy', 'affinity'])) as { nftables: { set?: { elem?: { elem: { val: { concat: unknown[] } } }[] } }[] };
  const set = listing.nftables.find((x) => x.set)!.set!;
  return (set.elem ?? []).map((e) => e.elem.val.concat.join(' . ')).sort();
}

async function loaded(ns: Netns): Promise<Map<string, string>> {
  ns.nft(['-f', '-'], await run(['compile', '--layout', 'fast-load', labFile]));
  return constants(ns);
}

describe('diff --layout fast-load: members of removed endpoints', () => {
  it('deletes the removed endpoint\'s member, keeps the others, and converges', async () => {
    expect(changed).not.toBe(base);
    await withNetns('da', async (ns) => {
      const c = await loaded(ns);
      for (const ep of sticky) ns.nft(['add', 'element', 'ip', 'kube-proxy', 'affinity', `{ ${client} . ${c.get(ep)} timeout 60s }`]);
      expect(members(ns)).toEqual(sticky.map((ep) => `${client} . ${c.get(ep)}`).sort());

      const tx = await diffAgainst(ns, changed);
      const gone = `{ ${client} . ${c.get('10.180.1.2')} }`;
      expect(tx.trim().split('\n').slice(-2)).toEqual([`add element ip kube-proxy affinity ${gone}`, `delete element ip kube-proxy affinity ${gone}`]);
      expect(tx.match(/ element ip kube-proxy affinity /g)).toHaveLength(2);
      ns.nft(['-f', '-'], tx);

      expect(members(ns)).toEqual(['10.180.1.1', '10.180.1.3'].map((ep) => `${client} . ${c.get(ep)}`).sort());
      expect(await diffAgainst(ns, changed)).toBe('');
    });
  });

  it('applies when the stale member expired after the listing', async () => {
    await withNetns('da', async (ns) => {
      const c = await loaded(ns);
      ns.nft(['add', 'element', 'ip', 'kube-proxy', 'affinity', `{ ${client} . ${c.get('10.180.1.1')} timeout 60s }`]);
      // Two clients of the endpoint that goes, both gone within the second.
      for (const who of [client, '203.0.113.8']) ns.nft(['add', 'element', 'ip', 'kube-proxy', 'affinity', `{ ${who} . ${c.get('10.180.1.2')} timeout 1s }`]);
      const tx = await diffAgainst(ns, changed);
      // Both in one command: a member expired fails neither it nor the transaction.
      const deletes = tx.match(/^delete element ip kube-proxy affinity \{ (.*) \}$/gm) ?? [];
      expect(deletes).toHaveLength(1);
      expect(deletes[0]!.split(', ')).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // A plain delete of an expired member fails (hence the add before each delete).
      expect(ns.run('nft', ['delete', 'element', 'ip', 'kube-proxy', 'affinity', `{ 203.0.113.8 . ${c.get('10.180.1.2')} }`]).status).not.toBe(0);
      ns.nft(['-f', '-'], tx);
      expect(members(ns)).toEqual([`${client} . ${c.get('10.180.1.1')}`]);
      // And a member that was never there: added and deleted, nothing left.
      const absent = `{ 203.0.113.9 . ${c.get('10.180.1.3')} }`;
      ns.nft(['-f', '-'], `add element ip kube-proxy affinity ${absent}\ndelete element ip kube-proxy affinity ${absent}\n`);
      expect(members(ns)).toEqual([`${client} . ${c.get('10.180.1.1')}`]);
      expect(await diffAgainst(ns, changed)).toBe('');
    });
  });
});
