// The kind schemas are valid JSON Schema (validate.ts does not check them at run time), and
// the validators generated from them at build time are up to date.
import * as fs from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import * as kinds from '../../src/schema/kinds.js';
import { GENERATED, schemasByKind, validatorsModule } from '../../scripts/gen-validators.mjs';

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

  it('match src/schema/validators.generated.ts (else run `npm run gen:validators`)', async () => {
    const fresh = validatorsModule(await schemasByKind(new URL('../../src/schema/kinds.ts', import.meta.url).href));
    expect(fresh === fs.readFileSync(GENERATED, 'utf8'), 'src/schema/validators.generated.ts is stale: run `npm run gen:validators`').toBe(true);
  });
});
