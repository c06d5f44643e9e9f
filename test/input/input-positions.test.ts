// Diagnostics point at the offending VALUE (its first character: the opening quote of a
// quoted scalar, the bracket of a flow collection), in block and flow style, in JSON and
// inside a kind: List; at the key when the value is empty or the key itself is wrong.
import { describe, expect, it } from 'vitest';
import { parseFiles, type FieldPath } from '../../src/input/source.js';
import { kproxc } from '../helpers/kproxc.js';

/** Line and column (1-based) of the first occurrence of `needle` in `text`. */
function where(text: string, needle: string, nth = 0): string {
  let at = -1;
  for (let i = 0; i <= nth; i++) at = text.indexOf(needle, at + 1);
  if (at === -1) throw new Error(`${needle} not in text`);
  const before = text.slice(0, at).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

function locate(text: string, field: FieldPath, opts?: { key?: boolean }, item = 0): string {
  const { objects, diagnostics } = parseFiles([{ name: 'f.yaml', text }]);
  expect(diagnostics).toEqual([]);
  const p = objects[item].locate(field, opts);
  return `${p.line}:${p.col}`;
}

describe('locate', () => {
  const block = `apiVersion: v1
kind: Service
metadata:
  name: "svc1"
  namespace:   'ns1'
spec:
  clusterIP:
    10.0.0.1
  ports:
  - name: p80
    port: 80
  sessionAffinity:
`;
  it('block style: the value, wherever it starts', () => {
    expect(locate(block, ['metadata', 'name'])).toBe(where(block, '"svc1"'));
    expect(locate(block, ['metadata', 'namespace'])).toBe(where(block, "'ns1'"));
    expect(locate(block, ['spec', 'clusterIP'])).toBe(where(block, '10.0.0.1'));
    expect(locate(block, ['spec', 'ports', 0, 'port'])).toBe(where(block, '80', 1));
    expect(locate(block, ['spec', 'ports', 0])).toBe(where(block, 'name: p80'));
  });

  it('an empty value points at its key; a missing field at its nearest parent', () => {
    expect(locate(block, ['spec', 'sessionAffinity'])).toBe(where(block, 'sessionAffinity'));
    expect(locate(block, ['spec', 'ports', 0, 'nodePort'])).toBe(where(block, 'name: p80'));
    expect(locate(block, ['status', 'loadBalancer'])).toBe('1:1');
  });

  it('the key itself when asked (a bad label key)', () => {
    expect(locate(block, ['metadata', 'namespace'], { key: true })).toBe(where(block, 'namespace'));
  });

  const flow = `{apiVersion: v1, kind: Service, metadata: {name: svc1, namespace: "ns1"}, spec: {ports: [{port: 80}, {port: "x"}], externalIPs: []}}\n`;
  it('flow style', () => {
    expect(locate(flow, ['metadata', 'namespace'])).toBe(where(flow, '"ns1"'));
    expect(locate(flow, ['spec', 'ports', 1, 'port'])).toBe(where(flow, '"x"'));
    expect(locate(flow, ['spec', 'ports', 1])).toBe(where(flow, '{port: "x"}'));
    expect(locate(flow, ['spec', 'externalIPs'])).toBe(where(flow, '[]'));
  });

  const json = `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
    {
      "apiVersion": "v1",
      "kind": "Service",
      "metadata": {"name": "svc1", "labels": {"a/b": "c"}},
      "spec": {"clusterIP": "10.0.0.1", "ports": [{"port": 70000}]}
    }
  ]
}
`;
  it('JSON, inside a kind: List', () => {
    expect(locate(json, ['spec', 'ports', 0, 'port'], undefined, 1)).toBe(where(json, '70000'));
    expect(locate(json, ['metadata', 'labels', 'a/b'], undefined, 1)).toBe(where(json, '"c"'));
    expect(locate(json, ['metadata', 'labels', 'a/b'], { key: true }, 1)).toBe(where(json, '"a/b"'));
    expect(locate(json, [], undefined, 1)).toBe(where(json, '{\n      "apiVersion"'));
  });

  it('an alias, where it stands (the field that holds it), and fields of an aliased mapping in its anchor', () => {
    const aliased = `apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  clusterIP: &ip 10.0.0.1\n  externalIPs: [*ip]\n  ports: [&p {port: 80}, *p]\n`;
    expect(locate(aliased, ['spec', 'externalIPs', 0])).toBe(where(aliased, '*ip'));
    expect(locate(aliased, ['spec', 'ports', 1, 'port'])).toBe(where(aliased, '80'));
  });
});

describe('positions in diagnostics of a whole run', () => {
  it('every problem, each at its value, in block and flow style', async () => {
    const text = `apiVersion: v1
kind: Node
metadata: {name: test-node}
---
apiVersion: v1
kind: Service
metadata:
  name: svc1
  namespace: ns1
  labels: {"-bad": ok, good: "bad value!"}
spec:
  type: NodePort
  clusterIP: "10.0.0.01"
  ports:
  - {name: p80, port: 80, nodePort: 30080}
  - name: p81
    port: 81
    nodePort: 30080
  externalIPs: [127.0.0.1]
`;
    // --strict: the problems kube-proxy programs through are warnings, shown with the errors.
    const r = await kproxc(['compile', '-', '--strict'], text);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        `<stdin>:${where(text, '"-bad"')}: Service ns1/svc1: metadata.labels.-bad: label key must be a qualified name: letters, digits, "-", "_" and ".", starting and ending with a letter or digit, with an optional DNS-subdomain prefix and "/" (the API server refuses it; kube-proxy does not check it)`,
        `<stdin>:${where(text, '"bad value!"')}: Service ns1/svc1: metadata.labels.good: must be a label value: letters, digits, "-", "_" and ".", starting and ending with a letter or digit (the API server refuses it; kube-proxy does not check it)`,
        `<stdin>:${where(text, '"10.0.0.01"')}: Service ns1/svc1: spec.clusterIP: "10.0.0.01" is not in canonical form: read as 10.0.0.1, as kube-proxy reads it (write 10.0.0.1)`,
        `<stdin>:${where(text, '30080', 1)}: Service ns1/svc1: spec.ports[1].nodePort: duplicate node port 30080/TCP`,
        `<stdin>:${where(text, '127.0.0.1')}: Service ns1/svc1: spec.externalIPs[0]: 127.0.0.1 may not be in the loopback range (127.0.0.0/8)`,
        '',
      ].join('\n'),
    );
  });

  it('a schema problem does not hide the other problems of the same object', async () => {
    const text = `apiVersion: v1
kind: Node
metadata: {name: test-node}
---
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc1"},
 "spec": {"clusterIP": "10.0.0.1", "ports": [{"port": "80"}], "externalIPs": ["1.2.3.4.5"]}}
`;
    const r = await kproxc(['compile', '-'], text);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `<stdin>:${where(text, '"80"')}: Service default/svc1: spec.ports[0].port: must be of type integer\n` +
        `<stdin>:${where(text, '"1.2.3.4.5"')}: Service default/svc1: spec.externalIPs[0]: "1.2.3.4.5" is not a valid IP address\n`,
    );
  });
});
