// The layouts are one closed map: every layout has an entry, no other value is taken for
// one, and what a layout emits comes from its entry.
import { describe, expect, it } from 'vitest';
import { InternalError } from '../../src/diag/diagnostic.js';
import { DEFAULT_LAYOUT, LAYOUT_SPECS, LAYOUTS, layoutEmitters, layoutSpec, type Layout } from '../../src/backends/nftables/layout.js';

describe('layouts', () => {
  it('are the keys of the map, the default first', () => {
    expect(LAYOUTS).toEqual(Object.keys(LAYOUT_SPECS));
    expect(LAYOUTS[0]).toBe(DEFAULT_LAYOUT);
  });

  it('a value that is not a layout is refused, not compiled as kube-proxy', () => {
    // @ts-expect-error: a third value is not a Layout
    const third: Layout = 'third';
    expect(() => layoutEmitters(third)).toThrow(InternalError);
    expect(() => layoutSpec('toString' as Layout)).toThrow(InternalError);
  });

  it('a map by layout needs an entry for each', () => {
    // @ts-expect-error: fast-load's entry is missing
    const partial: Record<Layout, string> = { 'kube-proxy': '' };
    expect(Object.keys(partial)).not.toEqual(LAYOUTS);
  });

  it('JSON keeps fast-load from its table-wide affinity set', () => {
    expect(layoutEmitters('fast-load', { format: 'json', version: '1.35', family: 'ip' }).servicePort.affinity).toBe(layoutEmitters('kube-proxy').servicePort.affinity);
    expect(layoutEmitters('fast-load').servicePort.affinity).not.toBe(layoutEmitters('kube-proxy').servicePort.affinity);
  });
});
