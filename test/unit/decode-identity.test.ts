// Objects are the same when kind, namespace ("default" when absent; none for cluster-scoped
// kinds) and name are: a second one is refused at its name, whatever the names hold.
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/diag/diagnostic.js';
import { parseFiles } from '../../src/input/source.js';
import { decodeAll } from '../../src/model/decode.js';
import { validateObjects } from '../../src/schema/validate.js';

function duplicates(docs: string[]): string[] {
  const parsed = parseFiles([{ name: 'f.yaml', text: docs.join('---\n') }]);
  const validated = validateObjects(parsed.objects);
  const diags: Diagnostic[] = [];
  decodeAll(validated.typed, diags);
  return diags.filter((d) => d.message.startsWith('duplicate')).map((d) => `${d.pos.line} ${d.kind} ${d.object}: ${d.message}`);
}

const service = (name: string, ns?: string) =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${JSON.stringify(name)}\n${ns === undefined ? '' : `  namespace: ${JSON.stringify(ns)}\n`}spec:\n  clusterIP: None\n`;
const node = (name: string) => `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${JSON.stringify(name)}\n`;
const cidr = (name: string) => `apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata:\n  name: ${JSON.stringify(name)}\nspec:\n  cidrs: [10.0.0.0/16]\n`;

describe('duplicate objects', () => {
  it('are the same kind, namespace and name', () => {
    expect(duplicates([service('x', 'a'), service('x', 'b'), node('x'), cidr('x'), service('x', 'a')])).toEqual([
      '32 Service a/x: duplicate Service: already defined at f.yaml:4:9',
    ]);
  });

  it('read an absent namespace as "default"', () => {
    expect(duplicates([service('x'), service('x', 'default'), service('x', 'a'), service('x')])).toEqual([
      '11 Service default/x: duplicate Service: already defined at f.yaml:4:9',
      '27 Service default/x: duplicate Service: already defined at f.yaml:4:9',
    ]);
  });

  it('tell apart names and namespaces that would run together', () => {
    expect(duplicates([service('b/c', 'a'), service('c', 'a/b'), service('a b', 'c'), service('b c', 'a'), node('a b'), node('a b')])).toEqual([
      '41 Node a b: duplicate Node: already defined at f.yaml:36:9',
    ]);
  });

  it('are found among many objects of one name', () => {
    const docs = Array.from({ length: 50 }, (_, i) => service('web', `ns${i}`));
    docs.push(service('web', 'ns7'), node('web'), node('web'));
    expect(duplicates(docs)).toEqual([
      '404 Service ns7/web: duplicate Service: already defined at f.yaml:60:9',
      '417 Node web: duplicate Node: already defined at f.yaml:412:9',
    ]);
  });
});
