// Which kube-proxy release a table is compiled for: the flag, else the Node, else the
// newest; and, for diff, the release a live table's shape shows.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectVersion, type TableShape } from '../../src/backends/nftables/versions.js';
import { compileTables, loadModel } from '../../src/compile.js';
import { contentsView, ruleText } from '../../src/live/view.js';
import { KUBE_PROXY_VERSIONS, parseKubeProxyVersion, type KubeProxyVersion } from '../../src/model/kube-proxy-version.js';
import { StatementStore } from '../../src/nft/ruleset.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { kproxc } from '../helpers/kproxc.js';

const OVERALL = path.join(FIXTURES, 'kube-proxy-overall.yaml');

describe('parseKubeProxyVersion', () => {
  it.each([
    ['1.37', '1.37'],
    ['v1.37.1', '1.37'],
    ['v1.36.2-gke.100', '1.36'],
    ['v1.36.0', '1.36'],
    ['v1.35.3', '1.35'],
    ['v1.30.0+k3s1', '1.35'],
    ['1.29', '1.35'],
  ])('%s programs the table of %s', (text, version) => {
    expect(parseKubeProxyVersion(text)).toEqual({ version });
  });

  it.each(['1.28', 'v1.20.4', '1.38', 'v2.0.0', 'latest', '', '1', 'v1.37.1 '])('%j is refused, naming the releases kproxc knows', (text) => {
    const r = parseKubeProxyVersion(text);
    expect('problem' in r && r.problem).toMatch(/1\.29 to 1\.37|not a Kubernetes version/);
  });
});

/** The overall fixture with its Node reporting these nodeInfo fields. */
function withNodeInfo(info: Record<string, string>): string {
  const text = fs.readFileSync(OVERALL, 'utf8');
  const fields = Object.entries(info).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ');
  const out = text.replace(/(kind: Node\nmetadata: \{name: test-node\}\nstatus:\n)/, `$1  nodeInfo: {${fields}}\n`);
  if (out === text) throw new Error('the fixture has no Node to give a version to');
  return out;
}

const tableOf = async (args: string[], stdin: string) => (await kproxc(['compile', '-', ...args], stdin)).stdout;

describe('the release compile programs', () => {
  it('is the Node\'s kubeletVersion, or its kubeProxyVersion where the kubelet still sets it', async () => {
    const v136 = await tableOf(['--kube-proxy-version', '1.36'], fs.readFileSync(OVERALL, 'utf8'));
    expect(await tableOf([], withNodeInfo({ kubeletVersion: 'v1.36.2' }))).toBe(v136);
    expect(await tableOf([], withNodeInfo({ kubeletVersion: 'v1.37.0', kubeProxyVersion: 'v1.36.1' }))).toBe(v136);
    expect(await tableOf([], withNodeInfo({ kubeletVersion: 'v1.36.2', kubeProxyVersion: '' }))).toBe(v136);
  });

  it('is --kube-proxy-version, whatever the Node says', async () => {
    const v135 = await tableOf(['--kube-proxy-version', '1.35'], fs.readFileSync(OVERALL, 'utf8'));
    expect(await tableOf(['--kube-proxy-version', 'v1.35.0'], withNodeInfo({ kubeletVersion: 'v1.99.0' }))).toBe(v135);
  });

  it('is the newest without either', async () => {
    const text = fs.readFileSync(OVERALL, 'utf8');
    expect(await tableOf([], text)).toBe(await tableOf(['--kube-proxy-version', '1.37'], text));
  });

  it('a Node release kproxc does not know is an error at its field, naming the ones it knows', async () => {
    const r = await kproxc(['compile', '-'], withNodeInfo({ kubeletVersion: 'v1.38.0' }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^<stdin>:\d+:\d+: Node test-node: status\.nodeInfo\.kubeletVersion: kube-proxy v1\.38\.0 is newer than kproxc knows: it knows kube-proxy 1\.29 to 1\.37 .*--kube-proxy-version\n$/);
  });

  it('a flag kproxc does not know is a usage error; the ovs backend takes none', async () => {
    const r = await kproxc(['compile', OVERALL, '--kube-proxy-version', '1.28']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kproxc: --kube-proxy-version: kube-proxy 1\.28 has no nftables mode; kproxc knows kube-proxy 1\.29 to 1\.37/);
    const ovs = await kproxc(['compile', OVERALL, '--backend', 'ovs', '--kube-proxy-version', '1.37']);
    expect(ovs.code).toBe(2);
    expect(ovs.stderr).toMatch(/--kube-proxy-version does not apply to --backend ovs/);
  });
});

describe('the release a live table shows', () => {
  const model = loadModel([{ name: OVERALL, text: fs.readFileSync(OVERALL, 'utf8') }], {});
  const shapeOf = (version: KubeProxyVersion): TableShape[] =>
    compileTables(model, { tableName: 'kube-proxy', version }, [], StatementStore).map((t) => {
      const view = contentsView(t);
      const names = Array.from({ length: view.chainCount }, (_, i) => view.chainName(i));
      return { chainNames: names, setNames: view.sets.map((s) => s.set.name), ruleTexts: (c) => view.rules(names.indexOf(c)).map(ruleText) };
    });

  it.each(KUBE_PROXY_VERSIONS)('a table of %s is told as %s', (version) => {
    expect(detectVersion(shapeOf(version)).version).toBe(version);
  });

  it('a table that cannot tell 1.36 from 1.37 (no one-endpoint Service) is the newest; no table is the newest', () => {
    const shape = shapeOf('1.36').map((t) => ({ ...t, chainNames: t.chainNames.filter((n) => !/^(service|local)-/.test(n)) }));
    expect(detectVersion(shape)).toMatchObject({ version: '1.37', why: expect.stringMatching(/no one-endpoint Service/) });
    expect(detectVersion([])).toMatchObject({ version: '1.37', why: 'no live kube-proxy table' });
  });
});
