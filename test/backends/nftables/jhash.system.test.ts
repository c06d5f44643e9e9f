// System test on the real kernel: src/nft/jhash.ts's endpointJhash is exactly what
// `jhash ip daddr . tcp dport mod M seed S` yields. In a private namespace where every
// unicast IPv4 address is local, TCP connections to pseudo-random destinations pass the
// output hook, where a rule per (seed, mod) records each destination with the kernel's hash
// in a set; every recorded hash must be the model's, and models a little wrong (another
// seed, the port's register unpadded, the port's bytes swapped) must miss every one.
import { describe, expect, it } from 'vitest';
import { formatIP, ipFromBytes, type IP } from '../../../src/net/ip.js';
import { endpointJhash, jhash } from '../../../src/nft/jhash.js';
import { withNetns } from '../../helpers/netns.js';

const SEEDS = [0, 1, 0xdeadbeef];
const MODS = [4294967295, 2147483647];
const COMBOS = SEEDS.flatMap((seed) => MODS.map((mod) => ({ seed, mod })));

interface Dest {
  ip: IP;
  port: number;
}

/** Destinations from a fixed xorshift32 stream (the same every run), ports 1 and 65535 among them. */
function destinations(n: number): Dest[] {
  let s = 0x6a686173; // "jhas"
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  const seen = new Set<string>();
  const out: Dest[] = [];
  while (out.length < n) {
    const r = next();
    // First byte 1..223 (not 0/8, multicast or reserved), last 1..254 (never a broadcast
    // address such as 127.255.255.255): every such address is a local destination below.
    const bytes = Uint8Array.from([1 + (r % 223), (r >>> 8) & 0xff, (r >>> 16) & 0xff, 1 + (next() % 254)]);
    const port = out.length === 0 ? 1 : out.length === 1 ? 65535 : 1 + (next() % 65535);
    const ip = ipFromBytes(4, bytes);
    const key = `${formatIP(ip)}/${port}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ ip, port });
    }
  }
  return out;
}

// One rule per (seed, mod); the set's first part tells the rules' records apart. The hash's
// slot is declared as numgen (an integer of 32 bits like jhash's): nft 1.0.6 loads a set
// declared `typeof ... jhash ...` but crashes listing it.
const table = `table ip jh {
  set seen {
    typeof numgen random mod 1 . ip daddr . tcp dport . numgen random mod 1
    size 65535
    flags dynamic
  }
  chain out {
    type filter hook output priority 0; policy accept;
${COMBOS.map(
  ({ seed, mod }, i) =>
    `    ct state new ct direction original meta l4proto tcp update @seen { numgen random mod 1 offset ${i} . ip daddr . tcp dport . jhash ip daddr . tcp dport mod ${mod} seed 0x${seed.toString(16)} }`,
).join('\n')}
  }
}
`;

/** The modelled hash of an 8-byte key, for the deliberately wrong models. */
const scaled = (key: Uint8Array, seed: number, mod: number) => Number((BigInt(jhash(key, seed)) * BigInt(mod)) >> 32n);

/** Models a little wrong: undefined for an endpoint a model cannot get wrong. */
const WRONG: Record<string, (d: Dest, seed: number, mod: number) => number | undefined> = {
  'another seed': (d, seed, mod) => endpointJhash(d.ip, d.port, mod, (seed + 1) >>> 0),
  'the port register unpadded (6 bytes)': (d, seed, mod) => scaled(Uint8Array.from([...d.ip.bytes, d.port >>> 8, d.port & 0xff]), seed, mod),
  // A port whose two bytes are equal (65535) is the same either way round.
  'the port little-endian': (d, seed, mod) =>
    d.port >>> 8 === (d.port & 0xff) ? undefined : scaled(Uint8Array.from([...d.ip.bytes, d.port & 0xff, d.port >>> 8, 0, 0]), seed, mod),
};

describe('jhash in real nft', () => {
  it('the kernel hashes every endpoint as endpointJhash, for every seed and mod', async () => {
    const dests = destinations(24);
    const listing = await withNetns('jh', (ns) => {
      ns.exec('ip', ['link', 'set', 'lo', 'up']);
      // Every address local: a connection to it is sent through lo, and refused at once.
      ns.exec('ip', ['route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo']);
      ns.nft(['-f', '-'], table);
      const script = 'for t; do exec 3<>/dev/tcp/${t%/*}/${t#*/}; done 2>/dev/null; true';
      ns.exec('timeout', ['10', 'bash', '-c', script, 'bash', ...dests.map((d) => `${formatIP(d.ip)}/${d.port}`)]);
      return ns.nft(['-j', 'list', 'set', 'ip', 'jh', 'seen']);
    });

    const set = (JSON.parse(listing).nftables as Record<string, { elem?: unknown[] }>[]).find((x) => x.set)!.set;
    const recorded = new Map<string, number>();
    for (const e of set.elem ?? []) {
      const [combo, addr, port, hash] = (e as { concat: [number, string, number, number] }).concat;
      recorded.set(`${combo} ${addr} ${port}`, hash);
    }
    const expected = new Map<string, number>();
    COMBOS.forEach(({ seed, mod }, i) => {
      for (const d of dests) expected.set(`${i} ${formatIP(d.ip)} ${d.port}`, endpointJhash(d.ip, d.port, mod, seed));
    });
    expect(recorded.size).toBe(COMBOS.length * dests.length);
    expect(recorded).toEqual(expected);

    // The test tells a wrong model: each of these misses every recorded hash it can miss.
    for (const [name, wrong] of Object.entries(WRONG)) {
      let checked = 0;
      COMBOS.forEach(({ seed, mod }, i) => {
        for (const d of dests) {
          const key = `${i} ${formatIP(d.ip)} ${d.port}`;
          const h = wrong(d, seed, mod);
          if (h === undefined) continue;
          expect(h, `${name}: ${key}`).not.toBe(recorded.get(key));
          checked++;
        }
      });
      expect(checked, name).toBeGreaterThanOrEqual((dests.length - 1) * COMBOS.length);
    }
  });
});
