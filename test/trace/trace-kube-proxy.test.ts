// kube-proxy's own packet-flow expectations (pkg/proxy/nftables/proxier_test.go and the
// tracer tests of helpers_test.go), reproduced as snapshots under test/trace/kube-proxy:
// every packet's verdict, endpoints (in kube-proxy's order) and masquerade must match.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/trace/result.js';
import { ROOT } from '../helpers/kproxc.js';
import { expectedOf, flowDir, packetOf, readFlows, tracerFor } from '../helpers/trace.js';

const dir = flowDir(ROOT);
const files = fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort();

describe('kube-proxy packet flows', () => {
  it('covers the packet-flow tests of kube-proxy', () => {
    const sources = files.map((f) => readFlows(path.join(dir, f)).source).join('\n');
    for (const t of [
      'TestOverallNFTablesRules',
      'TestNoEndpointsReject',
      'TestClusterIPGeneral',
      'TestLoadBalancer',
      'TestNodePorts',
      'TestTracePacketV6',
      'TestExternalTrafficPolicyLocal',
      'TestExternalTrafficPolicyCluster',
      'TestTerminatingEndpointsTrafficPolicyLocal',
      'TestTerminatingEndpointsTrafficPolicyCluster',
      'TestInternalTrafficPolicy',
      'TestInternalExternalMasquerade',
    ]) {
      expect(sources).toContain(t);
    }
  });

  for (const f of files) {
    const flows = readFlows(path.join(dir, f));
    describe(f, () => {
      for (const c of flows.cases) {
        it(c.name ?? c.snapshot, () => {
          const tracer = tracerFor(path.join(dir, c.snapshot), c.args ?? []);
          // kube-proxy's tests set healthCheckNodePort where the API server would refuse it:
          // the only warning its inputs may give.
          expect(tracer.warnings.filter((w) => w.field !== 'spec.healthCheckNodePort')).toEqual([]);
          for (const p of c.packets) {
            const r = tracer.trace(packetOf(p));
            const got = summarize(r);
            const want = expectedOf(p.output);
            const label = `${p.name}: ${p.sourceIP} -> ${p.destIP}:${p.destPort}`;
            expect({ verdict: got.verdict, endpoints: got.endpoints, masquerade: got.masquerade }, label).toEqual({
              verdict: want.verdict,
              endpoints: want.endpoints,
              masquerade: p.masq,
            });
          }
        });
      }
    });
  }
});
