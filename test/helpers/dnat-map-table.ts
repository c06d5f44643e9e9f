// A small table in kube-proxy 1.36's layout, per family: the Service chains DNAT through a
// numgen map (no endpoint chains), `services` marks ClusterIP traffic from outside the
// cluster inline, and `masquerading` holds the mark-and-masquerade rule and the hairpin
// rule over `@hairpin-connections` (saddr . daddr . l4proto . dport after DNAT). The
// library's tests of these forms (test/unit/dnat-map-forms.test.ts, the tracer's, and
// test/dnat-map.system.test.ts against real nft) all use it.
import { parseCIDR, parseIP, type IP } from '../../src/net/ip.js';
import type { Expr, Family, Stmt } from '../../src/nft/expr.js';
import type { Element, KeyPart } from '../../src/nft/objects.js';
import { statementsBuilder, type TableContents } from '../../src/nft/ruleset.js';

const ip = (s: string): IP => parseIP(s)!;

/** The addresses of each family's table. */
export const DNAT_MAP_ADDRESSES = {
  ip: { cluster: '10.244.0.0/16', svc: '10.96.0.20', svc1: '10.96.0.21', eps: ['10.244.0.10', '10.244.0.8'], ep1: '10.244.1.5', port: 9898 },
  ip6: { cluster: 'fd00:10::/64', svc: 'fd00:96::20', svc1: 'fd00:96::21', eps: ['fd00:10::a', 'fd00:10::8'], ep1: 'fd00:10::1:5', port: 9898 },
} as const;

export const MASQUERADE_MARK = 0x4000;
export const SERVICE_CHAIN = 'service-YVSKLJHA-ns/backend/tcp/http';
export const ONE_ENDPOINT_CHAIN = 'service-2QRHZV4L-ns/one/tcp/http';

/** The rule of `services` that marks ClusterIP traffic from outside the cluster. */
export function masqueradeMarkRule(family: Family): Stmt[] {
  const a = DNAT_MAP_ADDRESSES[family];
  return [
    { t: 'match', left: { t: 'payload', proto: family, field: 'daddr' }, op: '==', right: { t: 'setref', name: 'cluster-ips' } },
    { t: 'match', left: { t: 'payload', proto: family, field: 'saddr' }, op: '!=', right: { t: 'prefix', cidr: parseCIDR(a.cluster)!.cidr } },
    { t: 'mark-set', op: 'or', value: MASQUERADE_MARK },
  ];
}

/** `mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random`. */
export const MARK_MASQUERADE_RULE: Stmt[] = [
  { t: 'match', left: { t: 'and', left: { t: 'meta', key: 'mark' }, mask: MASQUERADE_MARK }, op: '!=', right: { t: 'num', n: 0 } },
  { t: 'mark-set', op: 'xor', value: MASQUERADE_MARK },
  { t: 'masquerade', fullyRandom: true },
];

/** `ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random`. */
export function hairpinRule(family: Family): Stmt[] {
  const key: Expr = {
    t: 'concat',
    parts: [
      { t: 'payload', proto: family, field: 'saddr' },
      { t: 'payload', proto: family, field: 'daddr' },
      { t: 'meta', key: 'l4proto' },
      { t: 'payload', proto: 'th', field: 'dport' },
    ],
  };
  return [
    { t: 'match', left: { t: 'ct', key: 'status' }, op: '==', right: { t: 'sym', s: 'dnat' } },
    { t: 'match', left: key, op: '==', right: { t: 'setref', name: 'hairpin-connections' } },
    { t: 'masquerade', fullyRandom: true },
  ];
}

/** `meta l4proto tcp dnat ip addr . port to numgen random mod N map { ... }` to the endpoints. */
export function numgenDnatRule(endpoints: string[], port: number): Stmt[] {
  return [
    { t: 'match', left: { t: 'meta', key: 'l4proto' }, op: '==', right: { t: 'sym', s: 'tcp' } },
    { t: 'numgen-dnat', mod: endpoints.length, targets: endpoints.map((e) => ({ ip: ip(e), port })) },
  ];
}

function hairpinElement(ep: string, port: number): Element {
  const a = ip(ep);
  const key: KeyPart[] = [
    { t: 'ip', ip: a },
    { t: 'ip', ip: a },
    { t: 'proto', name: 'tcp' },
    { t: 'port', n: port },
  ];
  return { set: 'hairpin-connections', key };
}

/** The table of one family, named kube-proxy. */
export function dnatMapTable(family: Family): TableContents {
  const a = DNAT_MAP_ADDRESSES[family];
  const addr = family === 'ip' ? 'ipv4_addr' : 'ipv6_addr';
  const b = statementsBuilder({ family, name: 'kube-proxy', comment: 'rules for kube-proxy' });
  b.chain({ name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100, policy: 'accept' } });
  b.chain({ name: 'nat-output', base: { type: 'nat', hook: 'output', priority: -100, policy: 'accept' } });
  b.chain({ name: 'nat-postrouting', base: { type: 'nat', hook: 'postrouting', priority: 100, policy: 'accept' } });
  for (const name of ['services', 'masquerading', SERVICE_CHAIN, ONE_ENDPOINT_CHAIN]) b.chain({ name });
  b.set({ name: 'hairpin-connections', kind: 'set', keyType: [addr, addr, 'inet_proto', 'inet_service'], comment: 'service hairpin connections' });
  b.set({ name: 'cluster-ips', kind: 'set', keyType: [addr], comment: 'Active ClusterIPs' });
  b.set({ name: 'service-ips', kind: 'map', keyType: [addr, 'inet_proto', 'inet_service'], comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic' });
  b.rule({ chain: 'nat-prerouting', stmts: [{ t: 'verdict', v: { kind: 'jump', target: 'services' } }] });
  b.rule({ chain: 'nat-output', stmts: [{ t: 'verdict', v: { kind: 'jump', target: 'services' } }] });
  b.rule({ chain: 'nat-postrouting', stmts: [{ t: 'verdict', v: { kind: 'jump', target: 'masquerading' } }] });
  b.rule({ chain: 'services', stmts: masqueradeMarkRule(family), comment: 'masquerade clusterIP traffic from outside cluster' });
  const serviceKey: Expr = { t: 'concat', parts: [{ t: 'payload', proto: family, field: 'daddr' }, { t: 'meta', key: 'l4proto' }, { t: 'payload', proto: 'th', field: 'dport' }] };
  b.rule({ chain: 'services', stmts: [{ t: 'vmap', key: serviceKey, map: 'service-ips' }] });
  b.rule({ chain: 'masquerading', stmts: MARK_MASQUERADE_RULE });
  b.rule({ chain: 'masquerading', stmts: hairpinRule(family) });
  b.rule({ chain: SERVICE_CHAIN, stmts: numgenDnatRule([...a.eps], a.port) });
  b.rule({ chain: ONE_ENDPOINT_CHAIN, stmts: numgenDnatRule([a.ep1], 80) });
  for (const ep of a.eps) b.element(hairpinElement(ep, a.port));
  for (const svc of [a.svc, a.svc1]) b.element({ set: 'cluster-ips', key: [{ t: 'ip', ip: ip(svc) }] });
  const svcPort = (svc: string, chain: string): Element => ({
    set: 'service-ips',
    key: [{ t: 'ip', ip: ip(svc) }, { t: 'proto', name: 'tcp' }, { t: 'port', n: 80 }],
    value: { kind: 'goto', target: chain },
  });
  b.element(svcPort(a.svc, SERVICE_CHAIN));
  b.element(svcPort(a.svc1, ONE_ENDPOINT_CHAIN));
  return b.finish();
}

/** Both families' tables. */
export const dnatMapTables = (): TableContents[] => [dnatMapTable('ip'), dnatMapTable('ip6')];
