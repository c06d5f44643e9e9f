// The fast-load layout: kube-proxy's chains, names and fixed part, with the per-Service
// anonymous sets replaced by rules (docs/fast-load.md has the measurements and the proof
// that each replacement behaves the same).
import type { ServicePortEmitters } from '../layout.js';
import { emitRuleFirewall } from './firewall.js';
import { emitUniformSelection } from './selection.js';

export const FAST_LOAD_EMITTERS: ServicePortEmitters = {
  firewall: emitRuleFirewall,
  selection: emitUniformSelection,
};
