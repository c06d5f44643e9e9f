// Which Service port owns an address, protocol and port (or a NodePort) that several claim.
// One rule for both backends: the Service port first in the model's order
// (namespace/name:port/protocol) owns the whole destination — its DNAT, its no-endpoint
// reject or drop, its source-range firewall — and any other claimant gets no rule there,
// whether or not either has endpoints. kube-proxy has no consistent answer to copy: two
// claims of one map key with different verdicts make nft refuse its whole transaction
// ("File exists"), and a claim with endpoints beside one without lands in two maps, so
// packets from outside are DNATed while packets the node sends are rejected.
import type { Diagnostic } from '../diag/diagnostic.js';
import { formatIP, type IP } from '../net/ip.js';
import type { FamilyModel, ServicePort } from '../model/types.js';

export type ClaimKind = 'ClusterIP' | 'external IP' | 'load-balancer IP' | 'NodePort';

interface Claim {
  sp: ServicePort;
  kind: ClaimKind;
}

/** Which destinations each Service port serves, once conflicts are settled. */
export interface Claims {
  /** False when another Service port (or another claim of this one) owns the destination. */
  owns(sp: ServicePort, kind: ClaimKind, ip?: IP): boolean;
}

/** ClusterIP traffic takes the internal path, the others the external one: one verdict each. */
const isInternal = (k: ClaimKind) => k === 'ClusterIP';

function label(sp: ServicePort): string {
  const { namespace, name, port, protocol } = sp.id;
  return `${namespace}/${name}:${port || String(sp.port)}/${protocol}`;
}

/** "external IP 192.0.2.1 TCP port 80", "NodePort TCP 30080 (IPv4)". */
function destination(sp: ServicePort, kind: ClaimKind, ip: IP | undefined): string {
  if (kind === 'NodePort') return `NodePort ${sp.id.protocol} ${sp.nodePort} (IPv${sp.family})`;
  return `${kind} ${formatIP(ip!)} ${sp.id.protocol} port ${sp.port}`;
}

function warning(lost: Claim, won: Claim, ip: IP | undefined): Diagnostic {
  const sp = lost.sp;
  const what = destination(sp, lost.kind, ip);
  const message =
    won.sp === sp
      ? `${what} is also the ${won.kind} of this Service port; it is served as the ${won.kind}, and the ${lost.kind} gets no rule for it`
      : `${what} is also the ${won.kind} of ${label(won.sp)}, which comes first in name order and serves it; ${label(sp)} gets no rule for it`;
  return { severity: 'warning', pos: sp.pos, kind: 'Service', object: `${sp.id.namespace}/${sp.id.name}`, message };
}

/** What is claimed: an address, protocol and port, or a NodePort and protocol. */
function claimKey(sp: ServicePort, kind: ClaimKind, ip: IP | undefined): string {
  return kind === 'NodePort' ? `${sp.id.protocol} ${sp.nodePort}` : `${formatIP(ip!)} ${sp.id.protocol} ${sp.port}`;
}

/** Settles every claim of the family's Service ports, warning once per claim that loses. */
export function resolveClaims(m: FamilyModel, warnings: Diagnostic[]): Claims {
  const owner = new Map<string, Claim>();
  const lost = new Map<ServicePort, Set<string>>();
  const claim = (sp: ServicePort, kind: ClaimKind, ip?: IP) => {
    const key = claimKey(sp, kind, ip);
    const had = owner.get(key);
    if (!had) {
      owner.set(key, { sp, kind });
      return;
    }
    // The same Service port on one path twice (an external IP that is also its load-balancer
    // IP) asks for the same verdict: no conflict.
    if (had.sp === sp && isInternal(had.kind) === isInternal(kind)) return;
    let mine = lost.get(sp);
    if (!mine) lost.set(sp, (mine = new Set()));
    mine.add(`${kind} ${key}`);
    warnings.push(warning({ sp, kind }, had, ip));
  };
  for (const sp of m.servicePorts) {
    claim(sp, 'ClusterIP', sp.clusterIP);
    for (const ip of sp.externalIPs) claim(sp, 'external IP', ip);
    for (const ip of sp.loadBalancerVIPs) claim(sp, 'load-balancer IP', ip);
    if (sp.nodePort !== 0) claim(sp, 'NodePort');
  }
  if (lost.size === 0) return { owns: () => true };
  return {
    owns(sp, kind, ip) {
      const mine = lost.get(sp);
      if (!mine) return true;
      return !mine.has(`${kind} ${claimKey(sp, kind, ip)}`);
    },
  };
}
