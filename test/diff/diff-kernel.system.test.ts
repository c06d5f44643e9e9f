// What decides whether `diff` needs --two-phase: kube-proxy waits a second before deleting
// a chain whose last map element it removed, because kernels before 6.2 notice only later
// that the chain is unreferenced ("Device or resource busy"). On this kernel the element,
// the flush and the chain deletion go in one transaction; docs/diff.md cites this test.
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { withNetns } from '../helpers/netns.js';

const setup = `add table ip t
add chain ip t ep
add rule ip t ep ip saddr 10.0.0.1 drop
add map ip t vm { type ipv4_addr . inet_proto . inet_service : verdict ; }
add element ip t vm { 10.0.0.1 . tcp . 80 : goto ep }
add chain ip t base { type nat hook prerouting priority -100 ; }
add rule ip t base ip daddr . meta l4proto . th dport vmap @vm
`;

describe(`kernel ${os.release()}`, () => {
  it('deletes a chain in the same transaction that removes the last map element pointing at it', async () => {
    await withNetns('diff', (ns) => {
      ns.nft(['-f', '-'], setup);
      const oneTx = 'delete element ip t vm { 10.0.0.1 . tcp . 80 }\nflush chain ip t ep\ndelete chain ip t ep\n';
      const r = ns.run('nft', ['-f', '-'], oneTx);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(ns.nft(['list', 'table', 'ip', 't'])).not.toContain('chain ep');
    });
  });

  it('refuses to delete it while the element still points at it (the order diff keeps)', async () => {
    await withNetns('diff', (ns) => {
      ns.nft(['-f', '-'], setup);
      const r = ns.run('nft', ['-f', '-'], 'flush chain ip t ep\ndelete chain ip t ep\ndelete element ip t vm { 10.0.0.1 . tcp . 80 }\n');
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('Device or resource busy');
    });
  });
});
