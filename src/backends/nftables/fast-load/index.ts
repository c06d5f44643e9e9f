// The fast-load layout: kube-proxy's chains, names and fixed part, with the per-Service
// anonymous sets and the per-endpoint affinity sets replaced by rules and one table-wide
// set (docs/fast-load.md has the measurements and the proof that each replacement behaves
// the same).
import { PER_ENDPOINT_AFFINITY } from '../affinity.js';
import type { ServicePortEmitters } from '../layout.js';
import { TABLE_WIDE_AFFINITY } from './affinity.js';
import { emitRuleFirewall } from './firewall.js';
import { emitUniformSelection } from './selection.js';

/** One table's emitters, with the table-wide affinity set or (JSON output) kube-proxy's per-endpoint sets. */
export function fastLoadEmitters(affinity: 'table-wide' | 'per-endpoint'): ServicePortEmitters {
  return {
    firewall: emitRuleFirewall,
    selection: emitUniformSelection,
    affinity: affinity === 'table-wide' ? TABLE_WIDE_AFFINITY : PER_ENDPOINT_AFFINITY,
  };
}
