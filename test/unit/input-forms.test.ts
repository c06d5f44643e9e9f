// The forms a snapshot comes in: encodings (a byte-order mark, UTF-16), streams of JSON
// objects, typed lists, the kube-proxy ConfigMap; what cannot be read is one line saying
// why; objects of kinds kproxc does not read are one line per kind.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeText } from '../../src/input/encoding.js';
import { embeddedPlace } from '../../src/input/embedded-text.js';
import { jsonObjectSpans } from '../../src/input/json-stream.js';
import { parseFiles, type SourceObject } from '../../src/input/source.js';
import { kproxc } from '../helpers/kproxc.js';

const NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n';
const SERVICE = { metadata: { name: 's', namespace: 'ns' }, spec: { clusterIP: '10.96.0.5', ports: [{ port: 80 }] } };

const utf16 = (text: string, endian: 'LE' | 'BE') => {
  const body = Buffer.from(text, 'utf16le');
  if (endian === 'BE') body.swap16();
  return Buffer.concat([Buffer.from(endian === 'LE' ? [0xff, 0xfe] : [0xfe, 0xff]), body]);
};

describe('decodeText', () => {
  it('reads UTF-8, with or without a byte-order mark, and UTF-16 with one', () => {
    const text = 'a: "é ✓ 😀"\nb: 2\n';
    expect(decodeText(Buffer.from(text))).toEqual({ text });
    expect(decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))).toEqual({ text });
    expect(decodeText(utf16(text, 'LE'))).toEqual({ text });
    expect(decodeText(utf16(text, 'BE'))).toEqual({ text });
    expect(decodeText(Buffer.alloc(0))).toEqual({ text: '' });
  });

  it('refuses what is not such text in one line, at the first byte that shows it', () => {
    expect(decodeText(Buffer.from('a: 1\nb: caf\xe9\n', 'latin1'))).toMatchObject({ line: 2, col: 7, problem: expect.stringMatching(/^not readable: byte 0xe9 is not UTF-8; /) });
    expect(decodeText(Buffer.from('a: 1\nb: \u0000\n'))).toMatchObject({ line: 2, col: 4, problem: 'not readable: binary data, not text (a NUL byte at offset 8)' });
    expect(decodeText(Buffer.from('kind: Node\n', 'utf16le'))).toMatchObject({ line: 1, col: 1, problem: expect.stringMatching(/UTF-16 LE text without a byte-order mark/) });
    expect(decodeText(Buffer.from('kind: Node\n', 'utf16le').swap16())).toMatchObject({ problem: expect.stringMatching(/UTF-16 BE text without a byte-order mark/) });
    expect(decodeText(Buffer.from([0x1f, 0x8b, 8, 0]))).toMatchObject({ problem: expect.stringMatching(/gzip-compressed/) });
    expect(decodeText(Buffer.from([0xff, 0xfe, 0, 0, 0x41, 0, 0, 0]))).toMatchObject({ problem: expect.stringMatching(/UTF-32/) });
    expect(decodeText(Buffer.concat([utf16('a\nb', 'LE'), Buffer.from([0x41])]))).toMatchObject({ line: 2, col: 2, problem: expect.stringMatching(/half a character/) });
    // Overlong forms and surrogates are not UTF-8 either.
    expect(decodeText(Buffer.from([0x61, 0xc0, 0xaf]))).toMatchObject({ col: 2, problem: expect.stringMatching(/byte 0xc0/) });
    expect(decodeText(Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80]))).toMatchObject({ col: 3, problem: expect.stringMatching(/byte 0xed/) });
  });
});

describe('jsonObjectSpans', () => {
  it('cuts a stream of objects, strings and escapes included', () => {
    const a = '{"a": "}{\\"", "b": [{}]}';
    const b = '{"c": 1}';
    const text = `  ${a}\n${b}\n\n`;
    expect(jsonObjectSpans(text)).toEqual({ spans: [[2, 2 + a.length], [3 + a.length, 3 + a.length + b.length]] });
  });

  it('says where it stops being a stream', () => {
    expect(jsonObjectSpans('{"a": 1}\n{"b": [')).toEqual({ problem: { offset: 9, message: expect.stringMatching(/not closed/), unclosed: true } });
    expect(jsonObjectSpans('{"a": 1} ---')).toEqual({ problem: { offset: 9, message: 'expected another JSON object or the end of the input, found "-"' } });
  });
});

/** Values and diagnostics of parseFiles, by the fast path and by the full parser, which must agree. */
function both(name: string, text: string) {
  const plain = (r: ReturnType<typeof parseFiles>) => ({
    values: r.objects.map((o) => o.value),
    diagnostics: r.diagnostics.map((d) => ({ ...d, pos: { file: d.pos.file, line: d.pos.line, col: d.pos.col } })),
  });
  const fast = parseFiles([{ name, text }]);
  const full = parseFiles([{ name, text }], { fast: false });
  expect(plain(fast)).toEqual(plain(full));
  return { ...plain(fast), objects: fast.objects, full: full.objects };
}

const at = (o: SourceObject, field: (string | number)[]) => {
  const p = o.locate(field);
  return `${p.line}:${p.col}`;
};

describe('streams and lists', () => {
  it('reads a stream of JSON objects, each placed in the file', () => {
    const text = `${JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, null, 2)}\n${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Service', ...SERVICE }] }, null, 2)}\n`;
    for (const name of ['s.json', 's.yaml', '<stdin>']) {
      const r = both(name, text);
      expect(r.values.map((v) => (v as { kind: string }).kind)).toEqual(['Node', 'Service']);
      expect(r.diagnostics).toEqual([]);
      const line = text.split('\n').findIndex((l) => l.includes('10.96.0.5')) + 1;
      for (const objects of [r.objects, r.full]) expect(at(objects[1], ['spec', 'clusterIP'])).toBe(`${line}:22`);
    }
  });

  it('gives the items of a typed list its kind and apiVersion, and keeps their own', () => {
    const list = (kind: string, apiVersion: string, items: unknown[]) => JSON.stringify({ kind, apiVersion, metadata: { resourceVersion: '1' }, items });
    const text = [
      list('ServiceList', 'v1', [SERVICE]),
      list('ServiceCIDRList', 'networking.k8s.io/v1beta1', [{ metadata: { name: 'k' }, spec: { cidrs: ['10.96.0.0/16'] } }]),
      list('DeploymentList', 'apps/v1', [{ metadata: { name: 'd' } }, { kind: 'Other', apiVersion: 'x/v1', metadata: { name: 'o' } }]),
      list('EndpointsList', 'v1', []),
    ].join('\n');
    const r = both('lists.json', text);
    expect(r.values.map((v) => `${(v as { apiVersion: string }).apiVersion} ${(v as { kind: string }).kind}`)).toEqual([
      'v1 Service',
      'networking.k8s.io/v1beta1 ServiceCIDR',
      'apps/v1 Deployment',
      'x/v1 Other',
    ]);
    // Positions stay those of the item in the file.
    expect(at(r.objects[0], ['spec', 'clusterIP'])).toBe(`1:${text.indexOf('"10.96.0.5"') + 1}`);
  });

  it('refuses a list whose items are not a list, naming its kind', () => {
    const r = both('l.yaml', 'apiVersion: v1\nkind: ServiceList\nitems: {a: 1}\n');
    expect(r.diagnostics.map((d) => `${d.pos.line}:${d.pos.col} ${d.kind} ${d.field}: ${d.message}`)).toEqual(['3:8 ServiceList items: must be a list of objects']);
  });
});

describe('the kube-proxy ConfigMap', () => {
  const configMap = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy, namespace: kube-system}\ndata:\n${data}`;

  it('stands for the KubeProxyConfiguration in its config.conf, placed inside the block', () => {
    const text = configMap('  kubeconfig.conf: |\n    apiVersion: v1\n  config.conf: |-\n    apiVersion: kubeproxy.config.k8s.io/v1alpha1\n    kind: KubeProxyConfiguration\n\n    clusterCIDR: 10.0.0.0/8\n');
    const r = both('cm.yaml', text);
    expect(r.values).toEqual([{ apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', clusterCIDR: '10.0.0.0/8' }]);
    for (const objects of [r.objects, r.full]) expect(at(objects[0], ['clusterCIDR'])).toBe('11:18');
  });

  it('is placed escape by escape inside a JSON string', () => {
    const conf = 'kind: KubeProxyConfiguration\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nhostnameOverride: "\u00e9"\nclusterCIDR: x\n';
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-proxy', namespace: 'kube-system' }, data: { 'config.conf': conf } }, null, 1);
    const line = text.split('\n').findIndex((l) => l.includes('config.conf')) + 1;
    const col = text.split('\n')[line - 1].indexOf('clusterCIDR: x') + 'clusterCIDR: '.length + 1;
    const r = both('cm.json', text);
    expect(at(r.objects[0], ['clusterCIDR'])).toBe(`${line}:${col}`);
  });

  it('warns about one without config.conf, and leaves other ConfigMaps to the unread ones', () => {
    const r = both('cm.yaml', `${configMap('  kubeconfig.conf: x\n')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy, namespace: other}\n`);
    expect(r.diagnostics.map((d) => `${d.severity} ${d.pos.line}:${d.pos.col} ${d.field}: ${d.message}`)).toEqual([
      'warning 5:3 data: holds no data["config.conf"], where kubeadm keeps kube-proxy\'s configuration; not read',
    ]);
    expect(r.values).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-proxy', namespace: 'other' } }]);
  });
});

describe('embeddedPlace', () => {
  it('falls back to the field itself where a map would be a guess', () => {
    const src = 'data:\n  c: >\n    a: 1\n    b: 2\n';
    const place = embeddedPlace(src, src.indexOf('>'), 'a: 1 b: 2\n');
    expect([place(0), place(6)]).toEqual([{ line: 2, col: 6 }, { line: 2, col: 6 }]);
  });

  it('maps a literal block with an explicit indentation and blank lines', () => {
    const src = 'd:\n  c: |2\n     x: 1\n\n    y: 2\n';
    const value = ' x: 1\n\ny: 2\n';
    const place = embeddedPlace(src, src.indexOf('|'), value);
    expect(place(value.indexOf('x'))).toEqual({ line: 3, col: 6 });
    expect(place(value.indexOf('y'))).toEqual({ line: 5, col: 5 });
  });
});

describe('what the command line tells', () => {
  const snapshot = `${NODE}---\napiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ns}\nspec: {clusterIP: 10.96.0.5, ports: [{port: 80}]}\n`;

  it('reads standard input in UTF-16 and names it <stdin> unquoted', async () => {
    const good = await kproxc(['compile', '-'], utf16(snapshot, 'LE'));
    expect(good.code).toBe(0);
    expect(good.stdout).toBe((await kproxc(['compile', '-'], snapshot)).stdout);
    const bad = await kproxc(['compile', '-'], utf16(snapshot.replace('10.96.0.5', '10.96.0.05'), 'BE'));
    expect(bad.stderr).toMatch(/^<stdin>:8:19: Service ns\/s: spec\.clusterIP: /);
  });

  it('tells one line per unread kind, after the warnings that change the ruleset', async () => {
    const pods = Array.from({ length: 3 }, (_, i) => `---\napiVersion: v1\nkind: Pod\nmetadata: {name: p${i}, namespace: ns}\n`).join('');
    const slice = '---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: ns}\naddressType: IPv4\nendpoints: []\n';
    const r = await kproxc(['compile', '-'], `${snapshot}${pods}${slice}---\napiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: old, namespace: ns}\n`);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n')).toEqual([
      '<stdin>:24:11: EndpointSlice ns/e: metadata.labels: warning: has no kubernetes.io/service-name label; skipped',
      '<stdin>:28:1: EndpointSlice ns/old: warning: discovery.k8s.io/v1beta1 EndpointSlice is not read by kproxc (it reads discovery.k8s.io/v1); skipped',
      '<stdin>:10:1: Pod ns/p0: warning: v1 Pod is not read by kproxc; skipped (3 objects, the first here)',
      '',
    ]);
  });

  it('names unread cluster-scoped objects without a namespace, namespaced ones with theirs', async () => {
    const objects = [
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: cr1}\n',
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n',
      'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\n',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n',
    ];
    const r = await kproxc(['compile', '-'], `${snapshot}${objects.map((o) => `---\n${o}`).join('')}`);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').map((l) => l.replace(/^<stdin>:\d+:\d+: /, '').replace(/: warning: .*/, ''))).toEqual([
      'ClusterRole cr1',
      'Namespace default',
      'Widget w1',
      'Deployment shop/web',
      '',
    ]);
  });

  it('says what an nft listing in a snapshot directory is', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-listing-'));
    try {
      fs.writeFileSync(path.join(dir, 'cluster.yaml'), snapshot);
      fs.writeFileSync(path.join(dir, 'live.json'), JSON.stringify({ nftables: [{ metainfo: { version: '1.0.6', json_schema_version: 1 } }] }));
      const r = await kproxc(['compile', dir]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe(`${path.join(dir, 'live.json')}:1:1: warning: an nft JSON listing (nft -j list ruleset), not a Kubernetes object: skipped; pass it to kproxc diff --live\n`);
      expect((await kproxc(['compile', dir, '--strict'])).code).toBe(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
