// Random cluster histories for property tests: a small cluster (scripts/gen-snapshot.mjs)
// and the changes a real one goes through (endpoints added, removed, moved, and put on
// other port numbers; Services added, removed, and changed in type, traffic policy,
// affinity and ports).
import fc from 'fast-check';
import { clusterIP, makeCluster, podIP, snapshotYaml } from '../../scripts/gen-snapshot.mjs';

export interface Endpoint {
  ip: string;
  local: boolean;
  /** Listens on its Service's target ports plus this: a pod whose named port has another number. */
  portShift?: number;
}

export interface Port {
  name: string;
  port: number;
  protocol: 'TCP' | 'UDP';
  targetPort: number;
  nodePort?: number;
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer';

export interface Service {
  ns: string;
  name: string;
  clusterIP: string;
  type: ServiceType;
  ports: Port[];
  externalLocal: boolean;
  affinity?: number;
  lbIP?: string;
  sourceRanges?: string[];
  endpoints: Endpoint[];
}

export interface Cluster {
  services: Service[];
  /** Counters that keep names, IPs and node ports unique across a history. */
  next: { service: number; pod: number; nodePort: number; lb: number };
}

export type Change =
  | { k: 'add-endpoint'; svc: number; local: boolean }
  | { k: 'remove-endpoint'; svc: number; ep: number }
  | { k: 'move-endpoint-node'; svc: number; ep: number }
  | { k: 'move-endpoint-service'; svc: number; ep: number; to: number }
  | { k: 'add-service'; type: ServiceType; affinity: boolean }
  | { k: 'remove-service'; svc: number }
  | { k: 'set-type'; svc: number; type: ServiceType; ranges: boolean }
  | { k: 'toggle-policy'; svc: number }
  | { k: 'set-affinity'; svc: number; timeout?: number }
  | { k: 'set-port'; svc: number; port: number }
  | { k: 'add-port'; svc: number }
  | { k: 'shift-endpoint-port'; svc: number; ep: number };

/** The Service that carries the hand-added affinity member: never removed or changed. */
export const PINNED = 0;
export const PINNED_MEMBER = '10.99.99.99';

export function initialCluster(n: number): Cluster {
  const base = makeCluster(n, { endpoints: 2 }) as { services: Service[]; nextPod: number };
  base.services[PINNED].affinity = 600;
  return { services: base.services, next: { service: n, pod: base.nextPod, nodePort: 30000, lb: 1 } };
}

function nodePorts(c: Cluster, s: Service): void {
  for (const p of s.ports) if (p.nodePort === undefined) p.nodePort = c.next.nodePort++;
}

function setType(c: Cluster, s: Service, type: ServiceType, ranges: boolean): void {
  s.type = type;
  if (type === 'ClusterIP') {
    for (const p of s.ports) delete p.nodePort;
    s.lbIP = undefined;
    s.sourceRanges = undefined;
    return;
  }
  nodePorts(c, s);
  if (type === 'LoadBalancer') {
    s.lbIP ??= `203.0.113.${c.next.lb++}`;
    // Adjacent ranges: nft merges them into one prefix when it loads the rule.
    s.sourceRanges = ranges ? ['198.51.100.0/25', '198.51.100.128/25', '192.168.0.0/16'] : undefined;
  } else {
    s.lbIP = undefined;
    s.sourceRanges = undefined;
  }
}

const pick = <T>(xs: T[], i: number): T | undefined => (xs.length ? xs[i % xs.length] : undefined);

/** The Services a change may touch: all but the pinned one. */
const changeable = (c: Cluster) => c.services.slice(1);

export function applyChange(c: Cluster, ch: Change): void {
  const some = (i: number) => pick(changeable(c), i);
  switch (ch.k) {
    case 'add-endpoint': {
      const s = pick(c.services, ch.svc);
      s?.endpoints.push({ ip: podIP(c.next.pod++), local: ch.local });
      return;
    }
    case 'remove-endpoint': {
      const s = some(ch.svc);
      if (s?.endpoints.length) s.endpoints.splice(ch.ep % s.endpoints.length, 1);
      return;
    }
    case 'move-endpoint-node': {
      const e = pick(some(ch.svc)?.endpoints ?? [], ch.ep);
      if (e) e.local = !e.local;
      return;
    }
    case 'move-endpoint-service': {
      const from = some(ch.svc);
      const to = some(ch.to);
      if (!from?.endpoints.length || !to || from === to) return;
      to.endpoints.push(...from.endpoints.splice(ch.ep % from.endpoints.length, 1));
      return;
    }
    case 'add-service': {
      const i = c.next.service++;
      const s: Service = {
        ns: `ns${i % 3}`,
        name: `svc${i}`,
        clusterIP: clusterIP(i),
        type: 'ClusterIP',
        ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }],
        externalLocal: false,
        affinity: ch.affinity ? 300 : undefined,
        endpoints: [{ ip: podIP(c.next.pod++), local: true }],
      };
      setType(c, s, ch.type, false);
      c.services.push(s);
      return;
    }
    case 'remove-service': {
      const s = some(ch.svc);
      if (s) c.services.splice(c.services.indexOf(s), 1);
      return;
    }
    case 'set-type': {
      const s = some(ch.svc);
      if (s) setType(c, s, ch.type, ch.ranges);
      return;
    }
    case 'toggle-policy': {
      const s = some(ch.svc);
      if (s) s.externalLocal = !s.externalLocal;
      return;
    }
    case 'set-affinity': {
      const s = some(ch.svc);
      if (s) s.affinity = ch.timeout;
      return;
    }
    case 'set-port': {
      const s = some(ch.svc);
      if (s) s.ports[0].port = ch.port;
      return;
    }
    case 'add-port': {
      const s = some(ch.svc);
      if (!s || s.ports.length > 1) return;
      s.ports.push({ name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 });
      if (s.type !== 'ClusterIP') nodePorts(c, s);
      return;
    }
    case 'shift-endpoint-port': {
      // An endpoint on other port numbers than its Service's other endpoints, or back.
      const e = pick(some(ch.svc)?.endpoints ?? [], ch.ep);
      if (e) e.portShift = e.portShift ? undefined : 1000;
      return;
    }
  }
}

const idx = fc.nat({ max: 50 });
const type = fc.constantFrom<ServiceType>('ClusterIP', 'NodePort', 'LoadBalancer');

export const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ k: fc.constant('add-endpoint' as const), svc: idx, local: fc.boolean() }),
  fc.record({ k: fc.constant('remove-endpoint' as const), svc: idx, ep: idx }),
  fc.record({ k: fc.constant('move-endpoint-node' as const), svc: idx, ep: idx }),
  fc.record({ k: fc.constant('move-endpoint-service' as const), svc: idx, ep: idx, to: idx }),
  fc.record({ k: fc.constant('add-service' as const), type, affinity: fc.boolean() }),
  fc.record({ k: fc.constant('remove-service' as const), svc: idx }),
  fc.record({ k: fc.constant('set-type' as const), svc: idx, type, ranges: fc.boolean() }),
  fc.record({ k: fc.constant('toggle-policy' as const), svc: idx }),
  fc.record({ k: fc.constant('set-affinity' as const), svc: idx, timeout: fc.option(fc.constantFrom(60, 10800), { nil: undefined }) }),
  fc.record({ k: fc.constant('set-port' as const), svc: idx, port: fc.constantFrom(80, 443, 8080) }),
  fc.record({ k: fc.constant('add-port' as const), svc: idx }),
  fc.record({ k: fc.constant('shift-endpoint-port' as const), svc: idx, ep: idx }),
);

/** A history: a few steps of one to three changes each. */
export const historyArb = fc.record({
  services: fc.integer({ min: 2, max: 6 }),
  steps: fc.array(fc.array(changeArb, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 5 }),
  twoPhase: fc.boolean(),
});

export function snapshot(c: Cluster): string {
  return snapshotYaml(c) as string;
}

export function cloneCluster(c: Cluster): Cluster {
  return structuredClone(c);
}
