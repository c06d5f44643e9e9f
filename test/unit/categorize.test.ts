// kube-proxy's CategorizeEndpoints, as a table of cases (after pkg/proxy/topology_test.go).
import { describe, expect, it } from 'vitest';
import { categorizeEndpoints } from '../../src/model/categorize.js';
import { parseIP } from '../../src/net/ip.js';
import { endpoint, ips, servicePort, type EpSpec } from './factory.js';

interface Case {
  name: string;
  sp?: Parameters<typeof servicePort>[0];
  zone?: string;
  eps: EpSpec[];
  cluster: string[];
  local: string[];
  all: string[];
  any: boolean;
}

const nodePort = { nodePort: 3001 };

const cases: Case[] = [
  {
    name: 'Cluster policy uses every ready endpoint',
    eps: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', local: true }, { ip: '10.0.0.3', ready: false }],
    cluster: ['10.0.0.1', '10.0.0.2'],
    local: [],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'no ready endpoint: serving-and-terminating fallback',
    eps: [
      { ip: '10.0.0.1', ready: false, serving: true, terminating: true },
      { ip: '10.0.0.2', ready: false, serving: false, terminating: true },
    ],
    cluster: ['10.0.0.1'],
    local: [],
    all: ['10.0.0.1'],
    any: true,
  },
  {
    name: 'nothing serving: no endpoints',
    eps: [{ ip: '10.0.0.1', ready: false }],
    cluster: [],
    local: [],
    all: [],
    any: false,
  },
  {
    name: 'internal Local with a local endpoint',
    sp: { internalPolicyLocal: true },
    eps: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', local: true }],
    cluster: [],
    local: ['10.0.0.2'],
    all: ['10.0.0.2'],
    any: true,
  },
  {
    name: 'internal Local without local endpoints still has endpoints somewhere',
    sp: { internalPolicyLocal: true },
    eps: [{ ip: '10.0.0.1' }],
    cluster: [],
    local: [],
    all: [],
    any: true,
  },
  {
    name: 'external Local uses cluster endpoints too (short-circuit)',
    sp: { externalPolicyLocal: true, ...nodePort },
    eps: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', local: true }],
    cluster: ['10.0.0.1', '10.0.0.2'],
    local: ['10.0.0.2'],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'external Local falls back to local terminating endpoints, merged with cluster ones',
    sp: { externalPolicyLocal: true, ...nodePort },
    eps: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', local: true, ready: false, serving: true, terminating: true }],
    cluster: ['10.0.0.1'],
    local: ['10.0.0.2'],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'zone hints select this zone',
    zone: 'a',
    eps: [
      { ip: '10.0.0.1', zones: ['a'] },
      { ip: '10.0.0.2', zones: ['b'] },
    ],
    cluster: ['10.0.0.1'],
    local: [],
    all: ['10.0.0.1'],
    any: true,
  },
  {
    name: 'zone hints ignored when one ready endpoint lacks them',
    zone: 'a',
    eps: [{ ip: '10.0.0.1', zones: ['a'] }, { ip: '10.0.0.2' }],
    cluster: ['10.0.0.1', '10.0.0.2'],
    local: [],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'zone hints ignored when none is for this zone',
    zone: 'c',
    eps: [
      { ip: '10.0.0.1', zones: ['a'] },
      { ip: '10.0.0.2', zones: ['b'] },
    ],
    cluster: ['10.0.0.1', '10.0.0.2'],
    local: [],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'zone hints ignored without a zone label',
    eps: [
      { ip: '10.0.0.1', zones: ['a'] },
      { ip: '10.0.0.2', zones: ['b'] },
    ],
    cluster: ['10.0.0.1', '10.0.0.2'],
    local: [],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'zone hints ignored when the Service disables topology',
    sp: { topologyDisabled: true },
    zone: 'a',
    eps: [
      { ip: '10.0.0.1', zones: ['a'] },
      { ip: '10.0.0.2', zones: ['b'] },
    ],
    cluster: ['10.0.0.1', '10.0.0.2'],
    local: [],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
  {
    name: 'node hints win over zone hints',
    zone: 'a',
    eps: [
      { ip: '10.0.0.1', zones: ['a'], nodes: ['other'] },
      { ip: '10.0.0.2', zones: ['a'], nodes: ['test-node'] },
    ],
    cluster: ['10.0.0.2'],
    local: [],
    all: ['10.0.0.2'],
    any: true,
  },
  {
    name: 'topology with external Local merges local endpoints outside the zone',
    sp: { externalPolicyLocal: true, ...nodePort },
    zone: 'a',
    eps: [
      { ip: '10.0.0.1', zones: ['a'] },
      { ip: '10.0.0.2', zones: ['b'], local: true },
    ],
    cluster: ['10.0.0.1'],
    local: ['10.0.0.2'],
    all: ['10.0.0.1', '10.0.0.2'],
    any: true,
  },
];

describe('categorizeEndpoints', () => {
  for (const c of cases) {
    it(c.name, () => {
      const sp = servicePort(c.sp);
      const labels: Record<string, string> = c.zone ? { 'topology.kubernetes.io/zone': c.zone } : {};
      const r = categorizeEndpoints(c.eps.map(endpoint), sp, 'test-node', labels);
      expect(ips(r.clusterEndpoints)).toEqual(c.cluster);
      expect(ips(r.localEndpoints)).toEqual(c.local);
      expect(ips(r.allReachableEndpoints)).toEqual(c.all);
      expect(r.hasAnyEndpoints).toBe(c.any);
    });
  }

  it('keeps a fixture-independent IP parse sane', () => {
    expect(parseIP('10.0.0.1')).not.toBeNull();
  });
});
