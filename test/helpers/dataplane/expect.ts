// Checks on probe results, each with a message that says which connection went wrong and
// what the snapshot expected, so a failing scenario reads without a debugger.
import { expect } from 'vitest';
import type { ProbeResult } from './processes.js';
import type { Expected } from './snapshot.js';

export type Answer = Extract<ProbeResult, { ok: true }>;

/**
 * How many connections make it near certain (1 in a million to fail) that a uniform random
 * choice among k endpoints hits every one: k (1 - 1/k)^n <= 1e-6.
 */
export function enoughToSeeAll(k: number): number {
  if (k <= 1) return 3;
  return Math.min(200, Math.ceil(Math.log(1e-6 / k) / Math.log(1 - 1 / k)));
}

const show = (r: ProbeResult) => (r.ok ? `${r.pod} ${r.addr}:${r.port} saw ${r.peer}` : `${r.error} after ${r.ms} ms${r.localPort ? ` from port ${r.localPort}` : ''}`);

/** Every attempt was answered; returns the answers. */
export function answered(results: ProbeResult[], what: string): Answer[] {
  const failed = results.filter((r) => !r.ok);
  expect(failed.map(show), `${what}: every connection is answered`).toEqual([]);
  return results as Answer[];
}

/**
 * Every attempt was answered by one of `expected` on its target port, and (with `all`)
 * every one of them answered at least once.
 */
export function answeredBy(results: ProbeResult[], expected: Expected[], what: string, all = true): Answer[] {
  const answers = answered(results, what);
  const allowed = new Set(expected.map((e) => `${e.pod} ${e.addr}:${e.targetPort}`));
  const seen = new Set(answers.map((a) => `${a.pod} ${a.addr}:${a.port}`));
  expect([...seen].filter((s) => !allowed.has(s)), `${what}: answers come only from the snapshot's endpoints ${[...allowed].join(', ')}`).toEqual([]);
  if (all) expect([...seen].sort(), `${what}: each endpoint answers in ${results.length} connections`).toEqual([...allowed].sort());
  return answers;
}

/** The endpoint saw the client's own address: no masquerading on the way. */
export function sourceKept(answers: Answer[], client: string, what: string): void {
  expect(answers.filter((a) => a.peer !== client).map(show), `${what}: endpoints see the client's ${client}`).toEqual([]);
}

/** The endpoint saw one of the node's own addresses instead of the client's: masqueraded. */
export function masqueraded(answers: Answer[], nodeAddrs: string[], what: string): void {
  expect(answers.filter((a) => !nodeAddrs.includes(a.peer)).map(show), `${what}: endpoints see a node address (${nodeAddrs.join(', ')})`).toEqual([]);
}

/** Every attempt failed with `error` (ECONNREFUSED for a reject, ETIMEDOUT for a drop). */
export function failedWith(results: ProbeResult[], error: string, what: string, withinMs?: number): void {
  expect(results.filter((r) => r.ok || r.error !== error).map(show), `${what}: every connection ends in ${error}`).toEqual([]);
  if (withinMs !== undefined) {
    expect(results.filter((r) => r.ms > withinMs).map(show), `${what}: refused at once, not after a timeout`).toEqual([]);
  }
}
