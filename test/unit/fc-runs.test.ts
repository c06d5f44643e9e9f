// The knob that sets how many runs each fast-check property makes (test/helpers/fc-runs.ts).
import { describe, expect, it } from 'vitest';
import { fcRuns, sizeFor } from '../helpers/fc-runs.js';

describe('FC_RUNS', () => {
  it('caps every property at 100 runs when unset or empty', () => {
    expect(fcRuns(3000, undefined)).toBe(100);
    expect(fcRuns(3000, '')).toBe(100);
    expect(fcRuns(12, undefined)).toBe(12);
  });

  it('gives each property its own count, a multiple of it, or one number for all', () => {
    expect(fcRuns(3000, 'full')).toBe(3000);
    expect(fcRuns(12, 'full')).toBe(12);
    expect(fcRuns(300, '10x')).toBe(3000);
    expect(fcRuns(300, '500')).toBe(500);
  });

  it('refuses what it cannot read rather than running a count nobody asked for', () => {
    for (const bad of ['0', 'x10', 'all', '-5', '1.5', '0x']) expect(() => fcRuns(100, bad), bad).toThrow(/^FC_RUNS/);
  });

  it('sizes a stress test small when unset or empty, and full whenever runs are asked for', () => {
    expect(sizeFor(100_000, 5000, undefined)).toBe(5000);
    expect(sizeFor(100_000, 5000, ' ')).toBe(5000);
    for (const v of ['full', '10x', '500']) expect(sizeFor(100_000, 5000, v), v).toBe(100_000);
  });
});
