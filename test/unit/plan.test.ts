// planServicePort decisions, one row per case (kube-proxy's syncProxyRules booleans).
import { describe, expect, it } from 'vitest';
import { planServicePort } from '../../src/backends/nftables/plan.js';
import { parseCIDR, parseIP } from '../../src/net/ip.js';
import { endpoint, familyModel, servicePort, type EpSpec } from './factory.js';

interface Row {
  name: string;
  sp?: Parameters<typeof servicePort>[0];
  eps: EpSpec[];
  expect: {
    usesClusterPolicyChain: boolean;
    usesLocalPolicyChain: boolean;
    hasInternalEndpoints: boolean;
    hasExternalEndpoints: boolean;
    usesExternalChain: boolean;
    internal?: string;
    external?: string;
  };
}

const lb = { nodePort: 3001, loadBalancerVIPs: [parseIP('1.2.3.4')!] };

const rows: Row[] = [
  {
    name: 'ClusterIP with endpoints',
    eps: [{ ip: '10.0.0.1' }],
    expect: { usesClusterPolicyChain: true, usesLocalPolicyChain: false, hasInternalEndpoints: true, hasExternalEndpoints: true, usesExternalChain: false },
  },
  {
    name: 'ClusterIP without endpoints rejects',
    eps: [],
    expect: {
      usesClusterPolicyChain: false,
      usesLocalPolicyChain: false,
      hasInternalEndpoints: false,
      hasExternalEndpoints: false,
      usesExternalChain: false,
      internal: 'goto',
      external: 'goto',
    },
  },
  {
    name: 'LoadBalancer Local without local endpoints drops external traffic',
    sp: { ...lb, externalPolicyLocal: true },
    eps: [{ ip: '10.0.0.1' }],
    expect: {
      usesClusterPolicyChain: true,
      usesLocalPolicyChain: false,
      hasInternalEndpoints: true,
      hasExternalEndpoints: false,
      usesExternalChain: true,
      external: 'drop',
    },
  },
  {
    name: 'LoadBalancer Local with a local endpoint',
    sp: { ...lb, externalPolicyLocal: true },
    eps: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', local: true }],
    expect: { usesClusterPolicyChain: true, usesLocalPolicyChain: true, hasInternalEndpoints: true, hasExternalEndpoints: true, usesExternalChain: true },
  },
  {
    name: 'internal Local without local endpoints drops ClusterIP traffic',
    sp: { internalPolicyLocal: true },
    eps: [{ ip: '10.0.0.1' }],
    expect: {
      usesClusterPolicyChain: false,
      usesLocalPolicyChain: false,
      hasInternalEndpoints: false,
      hasExternalEndpoints: true,
      usesExternalChain: false,
      internal: 'drop',
    },
  },
];

describe('planServicePort', () => {
  for (const r of rows) {
    it(r.name, () => {
      const sp = servicePort(r.sp);
      const p = planServicePort(sp, familyModel(sp, r.eps.map(endpoint)));
      expect({
        usesClusterPolicyChain: p.usesClusterPolicyChain,
        usesLocalPolicyChain: p.usesLocalPolicyChain,
        hasInternalEndpoints: p.hasInternalEndpoints,
        hasExternalEndpoints: p.hasExternalEndpoints,
        usesExternalChain: p.usesExternalChain,
      }).toEqual({
        usesClusterPolicyChain: r.expect.usesClusterPolicyChain,
        usesLocalPolicyChain: r.expect.usesLocalPolicyChain,
        hasInternalEndpoints: r.expect.hasInternalEndpoints,
        hasExternalEndpoints: r.expect.hasExternalEndpoints,
        usesExternalChain: r.expect.usesExternalChain,
      });
      expect(p.internalFilterVerdict?.kind).toBe(r.expect.internal);
      expect(p.externalFilterVerdict?.kind).toBe(r.expect.external);
    });
  }

  it('allows the VIPs as sources when the node IP is inside the source ranges', () => {
    const sp = servicePort({ ...lb, loadBalancerSourceRanges: [parseCIDR('192.168.0.0/24')!.cidr] });
    const p = planServicePort(sp, familyModel(sp, [endpoint({ ip: '10.0.0.1' })]));
    expect(p.usesFirewall).toBe(true);
    expect(p.firewallSources.map((s) => s.t)).toEqual(['cidr', 'ip']);
  });

  it('does not allow the VIPs when the node IP is outside the ranges', () => {
    const sp = servicePort({ ...lb, loadBalancerSourceRanges: [parseCIDR('203.0.113.0/25')!.cidr] });
    const p = planServicePort(sp, familyModel(sp, [endpoint({ ip: '10.0.0.1' })]));
    expect(p.firewallSources.map((s) => s.t)).toEqual(['cidr']);
  });

  it('has no firewall without load-balancer IPs', () => {
    const sp = servicePort({ loadBalancerSourceRanges: [parseCIDR('203.0.113.0/25')!.cidr] });
    expect(planServicePort(sp, familyModel(sp, [endpoint({ ip: '10.0.0.1' })])).usesFirewall).toBe(false);
  });
});
