// What kube-proxy's table looks like in each release (docs/kube-proxy-versions.md): how a
// rule asks for masquerade, where ClusterIP traffic from outside and hairpin traffic are
// masqueraded, and how a Service port without session affinity DNATs. The emitters read
// these forms from the family context; a release is an entry here.
import { NEWEST_KUBE_PROXY, type KubeProxyVersion } from '../../model/kube-proxy-version.js';
import { HAIRPIN_SET, MARK_MASQ_CHAIN, parseServicePortChain } from './names.js';

export interface TableForms {
  /** 1.35: rules jump to a `mark-for-masquerade` chain; 1.36 on: they set the mark themselves. */
  markChain: boolean;
  /**
   * ClusterIP traffic from outside the cluster: a rule in each Service chain (1.35), or one
   * rule over `@cluster-ips` first in `services` (1.36 on).
   */
  clusterIPMasquerade: 'per-service' | 'services-chain';
  /**
   * An endpoint reaching its own Service: a rule in each endpoint chain (1.35), or the
   * table-wide `hairpin-connections` set of the node's endpoints, matched after DNAT in
   * `masquerading` (1.36 on).
   */
  hairpin: 'endpoint-rule' | 'set';
  /**
   * A Service port without session affinity: endpoint chains picked by a numgen vmap
   * (1.35); a numgen DNAT map, no endpoint chains (1.36); and one endpoint DNATed
   * directly (1.37). Ports with affinity keep endpoint chains in every release.
   */
  dnat: 'endpoint-chains' | 'numgen-map' | 'numgen-map-or-direct';
}

export const TABLE_FORMS: Record<KubeProxyVersion, TableForms> = {
  '1.35': { markChain: true, clusterIPMasquerade: 'per-service', hairpin: 'endpoint-rule', dnat: 'endpoint-chains' },
  '1.36': { markChain: false, clusterIPMasquerade: 'services-chain', hairpin: 'set', dnat: 'numgen-map' },
  '1.37': { markChain: false, clusterIPMasquerade: 'services-chain', hairpin: 'set', dnat: 'numgen-map-or-direct' },
};

/** Whether a Service port's endpoints get chains of their own: always with affinity, else as the release does. */
export function usesEndpointChains(forms: TableForms, affinity: boolean): boolean {
  return affinity || forms.dnat === 'endpoint-chains';
}

/** What telling a live table's release needs of it. */
export interface TableShape {
  chainNames: readonly string[];
  setNames: readonly string[];
  /** The rules of a chain as nft text (read only for the few chains that decide). */
  ruleTexts(chain: string): readonly string[];
}

/** The release a live kube-proxy table was programmed by, and what showed it. */
export interface DetectedVersion {
  version: KubeProxyVersion;
  why: string;
}

/**
 * Which release programmed a live table, from its shape: the mark-for-masquerade chain is
 * 1.35's; without it the hairpin set is 1.36's or 1.37's, told apart by how a Service port
 * with one endpoint DNATs (a numgen map of one is 1.36's, a plain dnat 1.37's). A table that
 * shows neither form is taken for the newest, which programs it alike.
 */
export function detectVersion(tables: readonly TableShape[]): DetectedVersion {
  if (tables.length === 0) return { version: NEWEST_KUBE_PROXY, why: 'no live kube-proxy table' };
  if (tables.some((t) => t.chainNames.includes(MARK_MASQ_CHAIN))) return { version: '1.35', why: `a ${MARK_MASQ_CHAIN} chain` };
  if (!tables.some((t) => t.setNames.includes(HAIRPIN_SET))) {
    return { version: NEWEST_KUBE_PROXY, why: `neither a ${MARK_MASQ_CHAIN} chain nor a ${HAIRPIN_SET} set` };
  }
  for (const t of tables) {
    for (const chain of t.chainNames) {
      const kind = parseServicePortChain(chain)?.chain;
      if (kind !== 'clusterPolicy' && kind !== 'localPolicy') continue;
      const rules = t.ruleTexts(chain);
      if (rules.length !== 1) continue;
      if (/ dnat (ip6? )?(addr \. port )?to numgen random mod 1 map /.test(` ${rules[0]}`)) {
        return { version: '1.36', why: `a ${HAIRPIN_SET} set, and a one-endpoint Service DNATed through a numgen map (${chain})` };
      }
      if (/^meta l4proto \w+ dnat to /.test(rules[0])) return { version: '1.37', why: `a ${HAIRPIN_SET} set, and a one-endpoint Service DNATed directly (${chain})` };
    }
  }
  return { version: NEWEST_KUBE_PROXY, why: `a ${HAIRPIN_SET} set, and no one-endpoint Service to tell 1.36 from 1.37 (they program such a table alike)` };
}
