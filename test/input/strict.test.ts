// What kube-proxy programs although the API server refuses it compiles, with a warning;
// --strict fails on every warning, and reports all of them at once: those of the model and
// those the backends make, in one run, as a run without --strict prints them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, GOLDEN, listFixtures } from '../helpers/fixtures.js';
import { kproxc, ROOT } from '../helpers/kproxc.js';

const KUBE_PROXY_CASES = path.join(ROOT, 'test/trace/kube-proxy');
const HEALTH_CHECK_WARNING = /spec\.healthCheckNodePort: warning: ignored: only used with type LoadBalancer and externalTrafficPolicy Local; the API server refuses it here/;

/** The lines a --strict run must print: each warning of a lax run, as the error it becomes. */
function asStrict(laxStderr: string): string[] {
  return laxStderr
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(': warning: ', ': '))
    .sort();
}

describe('kube-proxy programs what the API server refuses', () => {
  // kube-proxy's own tests build such Services (TestOverallNFTablesRules, the terminating
  // endpoints cases): a healthCheckNodePort on a Service with Cluster policy.
  const cases = fs
    .readdirSync(KUBE_PROXY_CASES)
    .filter((n) => n.endsWith('.yaml'))
    .map((n) => path.join(KUBE_PROXY_CASES, n))
    .filter((f) => /healthCheckNodePort: \d+/.test(fs.readFileSync(f, 'utf8')));

  it('has kube-proxy cases with a healthCheckNodePort', () => {
    expect(cases.length).toBeGreaterThan(5);
  });

  for (const file of cases) {
    const text = fs.readFileSync(file, 'utf8');
    const name = path.basename(file);
    // Where the Service is LoadBalancer with Local policy the field is allowed: no warning.
    const refused = /externalTrafficPolicy: Cluster\n(?:.*\n)*?\s*healthCheckNodePort:|type: NodePort\n(?:.*\n)*?\s*healthCheckNodePort:/.test(text);
    it(`${name} compiles${refused ? ', warning about healthCheckNodePort' : ''}; --strict fails on its warnings`, async () => {
      const lax = await kproxc(['compile', file]);
      expect(lax.code, lax.stderr).toBe(0);
      expect(lax.stdout).toMatch(/^add table ip kube-proxy\n/);
      if (refused) expect(lax.stderr).toMatch(HEALTH_CHECK_WARNING);
      const strict = await kproxc(['compile', '--strict', file]);
      if (lax.stderr === '') {
        expect(strict.code).toBe(0);
        return;
      }
      expect(strict.code).toBe(2);
      expect(strict.stdout).toBe('');
      expect(strict.stderr.split('\n').filter(Boolean).sort()).toEqual(asStrict(lax.stderr));
    });
  }
});

describe('--strict reports every problem at once', () => {
  const withWarnings = listFixtures().filter((f) => fs.existsSync(path.join(GOLDEN, `${f.name}.nft.stderr`)));

  it('has fixtures with warnings of the model and of the backend', () => {
    expect(withWarnings.map((f) => f.name)).toEqual(expect.arrayContaining(['api-server-refuses', 'mixed-dump', 'service-conflicts']));
  });

  for (const f of withWarnings) {
    for (const backend of ['nftables', 'ovs']) {
      it(`${f.name} (${backend}): every warning, as an error`, async () => {
        const rel = path.relative(path.join(FIXTURES, '..'), f.file);
        const lax = await kproxc(['compile', rel, '--backend', backend, ...f.args]);
        expect(lax.code).toBe(0);
        const strict = await kproxc(['compile', rel, '--backend', backend, '--strict', ...f.args]);
        expect(strict.code).toBe(2);
        expect(strict.stdout).toBe('');
        expect(strict.stderr.split('\n').filter(Boolean).sort()).toEqual(asStrict(lax.stderr));
      });
    }
  }

  it('warnings of the model and of the backend together, in compile and trace', async () => {
    // Two Services claiming one NodePort (a backend warning) and a Pod (unread: a model warning).
    const text = `${fs.readFileSync(path.join(FIXTURES, 'service-conflicts.yaml'), 'utf8')}
---
apiVersion: v1
kind: Pod
metadata: {namespace: ns1, name: web}
`;
    const lax = await kproxc(['compile', '-'], text);
    expect(lax.code).toBe(0);
    const expected = asStrict(lax.stderr);
    expect(expected.length).toBe(6);
    const runs = [
      ['compile', '-', '--strict'],
      ['trace', '-', '--strict', '--src', '10.0.0.1', '--dst', '172.30.0.10', '--dport', '80'],
    ];
    for (const args of runs) {
      const strict = await kproxc(args, text);
      expect(strict.code, args.join(' ')).toBe(2);
      expect(strict.stderr.split('\n').filter(Boolean).sort(), args.join(' ')).toEqual(expected);
    }
  });
});
