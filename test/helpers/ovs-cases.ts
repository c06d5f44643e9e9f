// The snapshots the ovs backend is checked on, and where each one's golden bundle lives:
// the shared fixtures (golden/<case>.ovs) but for those that only exercise nftables
// settings, the ovs-only fixtures (golden/ovs/<case>.ovs) and the examples
// (golden/examples/<case>.ovs).
import * as path from 'node:path';
import { FIXTURES, listFixtures, type Fixture } from './fixtures.js';
import { ROOT } from './kproxc.js';

/** Fixtures whose subject the ovs backend has no counterpart for. */
export const NFT_ONLY: Record<string, string> = {
  'detect-local-bridge-interface': 'local-traffic detection only decides nftables masquerading',
  'detect-local-interface-name-prefix': 'local-traffic detection only decides nftables masquerading',
  'detect-local-none': 'local-traffic detection only decides nftables masquerading',
  'masquerade-all': 'masquerade marks are nftables-only',
  'masquerade-bit-iptables': 'masquerade marks are nftables-only',
};

export interface OvsCase extends Fixture {
  /** Path of the golden bundle under golden/. */
  golden: string;
}

export function ovsCases(): OvsCase[] {
  const shared = listFixtures()
    .filter((f) => !(f.name in NFT_ONLY))
    .map((f) => ({ ...f, golden: `${f.name}.ovs` }));
  const own = listFixtures(path.join(FIXTURES, 'ovs')).map((f) => ({ ...f, name: `ovs/${f.name}`, golden: `ovs/${f.name}.ovs` }));
  const examples = listFixtures(path.join(ROOT, 'examples')).map((f) => ({ ...f, name: `examples/${f.name}`, golden: `examples/${f.name}.ovs` }));
  return [...shared, ...own, ...examples];
}
