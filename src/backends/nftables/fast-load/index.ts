// The fast-load layout: kube-proxy's behaviour in a table the kernel loads far faster
// (docs/fast-load.md has the measurements and the proofs). In text: a Service port with
// few endpoints and neither affinity nor Local policy has no chains of its own
// (shared-dnat.ts), nor has a Local-policy one with few endpoints (local-policy.ts);
// another without affinity draws its endpoint from a table-wide endpoint map, in its
// policy chain or, with Local policy, in its external chain; one with affinity looks its
// client up in one table-wide set, each lookup DNATing itself, draws from its endpoint map
// too, and has its clients recorded after NAT (IPv4: affinity-records.ts), or keeps
// kube-proxy's endpoint chains, one rule each (the update, the DNAT), drawn through
// table-wide verdict maps (IPv6: affinity.ts, selection.ts). The services chain marks
// Cluster-policy external traffic by two sets instead of an external chain per port;
// hairpin is kube-proxy 1.36's set; ports with the same source ranges share a firewall
// chain. JSON cannot declare those `typeof` sets on nft 1.0.6: it keeps endpoint chains,
// chosen by rules, and kube-proxy's per-endpoint affinity sets.
import { PER_ENDPOINT_AFFINITY } from '../affinity.js';
import { emitKubeProxyFixedPart } from '../fixed.js';
import type { MasqueradeSets } from '../dispatch.js';
import type { FixedPart, ServicePortEmitters } from '../layout.js';
import { TABLE_WIDE_AFFINITY } from './affinity.js';
import { RECORDED_AFFINITY } from './affinity-records.js';
import { emitRuleFirewall, emitSharedRuleFirewall } from './firewall.js';
import { localMatch } from '../local-detector.js';
import { emitSharedLocalExternal, inlineLocalPolicy, sharesLocalExternal } from './local-policy.js';
import { affinityPassThrough, emitMapSelection, emitUniformSelection } from './selection.js';
import { CLUSTER_IP_DNAT_CHAIN, emitSharedDnat, sharesDnatChains } from './shared-dnat.js';

/**
 * The external and load-balancer IPs and NodePorts of Service ports with Cluster external
 * policy: the services chain marks their traffic for masquerade, one rule for all, where
 * kube-proxy gives each port an external chain of two rules (mark, goto its policy chain).
 * A chain costs nft about four times a set member to load (shared-dnat.ts).
 */
const MASQUERADE_SETS: MasqueradeSets = { addresses: 'masquerade-service-ips', nodePorts: 'masquerade-nodeports' };

/** kube-proxy's fixed part, with the chain the services chain jumps to for the ClusterIPs of ports that share, and the masquerade sets (text). */
export const emitFastLoadFixedPart: FixedPart = (b, ctx, m) =>
  emitKubeProxyFixedPart(b, ctx, m, { clusterIPDnatChain: CLUSTER_IP_DNAT_CHAIN, masqueradeSets: MASQUERADE_SETS });

/**
 * One table's emitters: with maps and the table-wide affinity set (text), its clients
 * recorded after NAT (IPv4) or by endpoint chains (IPv6); or chains and per-endpoint sets
 * (JSON).
 */
export function fastLoadEmitters(form: 'recorded' | 'maps' | 'chains'): ServicePortEmitters {
  return form !== 'chains'
    ? {
        firewall: emitSharedRuleFirewall,
        selection: emitMapSelection,
        affinity: form === 'recorded' ? RECORDED_AFFINITY : TABLE_WIDE_AFFINITY,
        sharedChains: (b, ctx, m, plan, owned) =>
          sharesDnatChains(plan, owned)
            ? emitSharedDnat(b, ctx, plan, owned)
            : sharesLocalExternal(plan, owned, localMatch(ctx, m.localDetector, true) !== undefined)
              ? emitSharedLocalExternal(b, ctx, m, plan, owned)
              : undefined,
        ...(form === 'maps' ? { passThrough: affinityPassThrough } : {}),
        masqueradeSets: MASQUERADE_SETS,
        inlinePolicyChains: inlineLocalPolicy,
      }
    : { firewall: emitRuleFirewall, selection: emitUniformSelection, affinity: PER_ENDPOINT_AFFINITY };
}
