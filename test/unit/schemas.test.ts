// The kind schemas are valid JSON Schema (validate.ts does not check them at run time).
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import * as kinds from '../../src/schema/kinds.js';

describe('kind schemas', () => {
  const schemas = Object.entries(kinds).filter(([name]) => name.endsWith('Schema'));

  it('include every kind validate.ts reads', () => {
    const names = schemas.map(([name]) => name);
    for (const n of ['endpointSliceSchema', 'endpointsSchema', 'kubeProxyConfigurationSchema', 'nodeSchema', 'serviceCIDRSchema', 'serviceSchema']) {
      expect(names).toContain(n);
    }
  });

  it.each(schemas)('%s is valid against the meta-schema', (_name, schema) => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    expect(ajv.validateSchema(schema as object), JSON.stringify(ajv.errors)).toBe(true);
  });
});
