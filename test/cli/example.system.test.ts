// The README's example: compile examples/cluster.yaml with the built binary and pipe it
// into `nft -f -` in a fresh network namespace, exactly as a user would.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/kproxc.js';
import { withNetns } from '../helpers/netns.js';

describe('examples/cluster.yaml', () => {
  it('compiles and loads with `kproxc compile ... | nft -f -`', async () => {
    await withNetns('example', (ns) => {
      const example = path.join(ROOT, 'examples/cluster.yaml');
      const r = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" compile "${example}" | ip netns exec ${ns.name} nft -f -`], {
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const listing = ns.nft(['list', 'table', 'ip', 'kube-proxy']);
      expect(listing).toContain('chain services');
      expect(listing).toContain('10.96.0.10 . udp . 53 : goto service-');
      expect(listing).toContain('firewall-');
    });
  });
});
