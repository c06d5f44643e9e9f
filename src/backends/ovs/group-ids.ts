// Group IDs (and with them the learn cookies) derived from what a group serves: the Service
// port and whether it holds the local or all cluster endpoints. An ID then names the same
// group in every snapshot, so a Service that comes or goes changes no other Service's
// groups or flows, and `kproxc diff --backend ovs` rewrites only what changed.

/** IPv4 IDs lie in 1..0x0fffffff and IPv6 IDs in 0x10000001..0x1fffffff: the two never meet. */
export const GROUP_ID_BASE = { 4: 1, 6: 0x10000001 } as const;
export const GROUP_ID_SPAN = 0x0fffffff;

/** FNV-1a over the UTF-16 units of a string: small, fast, and the same on every machine. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The i-th place a key may take (i = 0 first): each probe hashes the key anew. */
export function groupIDCandidate(family: 4 | 6, key: string, probe: number): number {
  const h = fnv1a(probe === 0 ? key : `${key}#${probe}`);
  return GROUP_ID_BASE[family] + (h % GROUP_ID_SPAN);
}

/**
 * IDs for keys given in a fixed (sorted) order: each takes its first free candidate. A
 * collision moves only the later of the two keys, and only while the earlier exists, so
 * a Service's IDs move only when it shares a hash with another one (at 10,000 Services,
 * one pair or so in a snapshot).
 */
export function allocateGroupIDs(family: 4 | 6, keys: string[]): number[] {
  const taken = new Set<number>();
  return keys.map((key) => {
    let probe = 0;
    let id = groupIDCandidate(family, key, probe);
    while (taken.has(id)) id = groupIDCandidate(family, key, ++probe);
    taken.add(id);
    return id;
  });
}
