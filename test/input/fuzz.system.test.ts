// Property-based tests (fast-check) on the real kernel: random valid clusters always
// compile, deterministically whatever the order of their objects, to rulesets that load
// into nft (kube-proxy 1.37's, 1.36's and 1.35's tables and fast-load's); random
// mutations of them into bad and hostile input never crash, never print a partial
// ruleset, and end in exit 2 with positioned diagnostics, or (when the mutation leaves the
// snapshot valid) in a ruleset that loads. `npm run fuzz` runs the same
// mutations 100,000 times. Run counts follow FC_RUNS (test/helpers/fc-runs.ts); FC_SEED=n
// replays a run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clusterArb, formatArb } from '../../scripts/fuzz/cluster.mjs';
import { mutate, mutationArb } from '../../scripts/fuzz/mutate.mjs';
import { judge, serialize } from '../../scripts/fuzz/snapshot.mjs';
import { fcParams } from '../helpers/fc-runs.js';
import { kproxc } from '../helpers/kproxc.js';
import { canonicalListing, withNetns, type Netns } from '../helpers/netns.js';

const VALID = fcParams(25);
const OTHER_TABLES = [['--kube-proxy-version', '1.36'], ['--kube-proxy-version', '1.35'], ['--layout', 'fast-load']];
const MUTATIONS = fcParams(300);

function load(ns: Netns, ruleset: string): void {
  ns.nft(['-f', '-'], ruleset);
}

describe('random valid clusters', () => {
  it('compile, deterministically in any order, to rulesets that load into nft (twice, to the same state), in every table form', async () => {
    await withNetns('inp', async (ns) => {
      await fc.assert(
        fc.asyncProperty(clusterArb, formatArb, fc.infiniteStream(fc.nat()), async (objects: unknown[], format: string, order) => {
          const text = serialize(objects, format);
          const r = await kproxc(['compile', '-'], text);
          expect(judge(text, r)).toBeNull();
          expect(r.code).toBe(0);

          expect((await kproxc(['compile', '-'], text)).stdout).toBe(r.stdout);
          const keys = objects.map(() => order.next().value as number);
          const shuffled = objects.map((o, i) => ({ o, k: keys[i] })).sort((a, b) => a.k - b.k).map((x) => x.o);
          expect((await kproxc(['compile', '-'], serialize(shuffled, 'yaml'))).stdout, 'shuffled').toBe(r.stdout);

          const json = await kproxc(['compile', '-', '--format', 'json'], text);
          expect(json.code).toBe(0);
          expect(() => JSON.parse(json.stdout)).not.toThrow();

          load(ns, r.stdout);
          const first = canonicalListing(ns.nft(['-j', 'list', 'ruleset']));
          load(ns, r.stdout);
          expect(canonicalListing(ns.nft(['-j', 'list', 'ruleset']))).toEqual(first);
          // The older releases' tables and fast-load's load too, each over the last.
          for (const form of OTHER_TABLES) {
            const other = await kproxc(['compile', '-', ...form], text);
            expect(judge(text, other), form.join(' ')).toBeNull();
            expect(other.code, form.join(' ')).toBe(0);
            load(ns, other.stdout);
          }
          ns.nft(['flush', 'ruleset']);
        }),
        VALID,
      );
    });
  });
});

describe('random mutations of valid clusters', () => {
  it('never crash nor print a partial ruleset: exit 2 with positioned diagnostics, or a ruleset that loads', async () => {
    const valid: string[] = [];
    let rejected = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(clusterArb, formatArb, mutationArb, async (objects: unknown[], format: string, m) => {
        const text = mutate(objects, format, m);
        const r = await kproxc(['compile', '-'], text);
        expect(judge(text, r), text).toBeNull();
        if (r.code === 0) valid.push(r.stdout);
        else rejected++;
        // The OVS backend reads the same input through the same checks: the same verdict.
        if (++runs % 3 === 0) {
          const o = await kproxc(['compile', '-', '--backend', 'ovs'], text);
          expect(judge(text, o, 'ovs'), text).toBeNull();
          expect(o.code, text).toBe(r.code);
        }
      }),
      MUTATIONS,
    );
    // Most mutations must be caught; those that stay valid must still load.
    expect(rejected).toBeGreaterThan(MUTATIONS.numRuns / 2);
    await withNetns('inp', (ns) => {
      for (const ruleset of valid) load(ns, ruleset);
    });
  });
});

describe('the fuzz judge', () => {
  const ok = (stdout: string) => judge('', { code: 0, stdout, stderr: '' });
  const ours = 'add table ip kube-proxy\ndelete table ip kube-proxy\ntable ip kube-proxy {\n\tchain c {\n\t\taccept\n\t}\n}\nadd element ip kube-proxy s { 1.2.3.4 }\n';

  it('accepts a ruleset that touches only our tables', () => {
    expect(ok(ours)).toBeNull();
  });

  it('refuses any line that could touch another table', () => {
    for (const bad of ['table inet filter {\n\tchain c {\n\t}\n}\n', 'add rule inet filter input drop\n', '\tchain c {\n', 'flush ruleset\n', 'add element ip other s { 1.2.3.4 }\n']) {
      expect(ok(ours + bad), bad).toMatch(/^output line that is not ours/);
    }
  });
});
