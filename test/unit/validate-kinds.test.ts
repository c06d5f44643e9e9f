// Kinds are looked up among the kinds kproxc reads only: a kind named like a property every
// object has (toString, constructor, __proto__) is an unknown kind, skipped with a warning.
import { describe, expect, it } from 'vitest';
import { parseFiles } from '../../src/input/source.js';
import { validateObjects } from '../../src/schema/validate.js';

describe('kinds', () => {
  it.each(['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__'])('%s is not a kind kproxc reads', (kind) => {
    const parsed = parseFiles([{ name: 'f.yaml', text: `apiVersion: v1\nkind: ${kind}\nmetadata:\n  name: x\n` }]);
    const { typed, diagnostics } = validateObjects(parsed.objects);
    expect(typed).toEqual([]);
    expect(diagnostics.map((d) => `${d.severity} ${d.message}`)).toEqual([`warning v1 ${kind} is not read by kproxc; skipped`]);
  });
});
