// The members of a live set that view.ts readsDynamicMembers reads (fast-load's table-wide
// affinity set: client address . A . B, where the constants A . B stand for an endpoint)
// that belong to no endpoint of the wanted table. kube-proxy deletes an endpoint's set with
// the endpoint; here its clients' elements are deleted instead, so that an endpoint
// removed and added again before they expire does not get its old clients back.
//
// The wanted endpoints are read from the wanted rules themselves: an element is wanted
// when some `update @set { ADDR . C1 . C2 ... }` writes its constants. Nothing is read
// unless the live set has members.
import { ruleStatements } from '../nft/canonical.js';
import type { Expr } from '../nft/expr.js';
import type { Element } from '../nft/objects.js';
import type { TableContents } from '../nft/ruleset.js';
import { printedRules, type LiveSet } from '../live/view.js';

const SEP = ' . ';

/** The constant parts of a key (`numgen random mod 1 offset C` is C) after its first, as keyString joins them; null when not all are constants. */
function constantsOf(key: Expr): string | null {
  if (key.t !== 'concat' || key.parts.length < 2) return null;
  const out: number[] = [];
  for (const p of key.parts.slice(1)) {
    if (p.t !== 'numgen' || p.mod !== 1) return null;
    out.push(p.offset ?? 0);
  }
  return out.join(SEP);
}

/** The constants that the wanted table's `update @set` statements write, each as `C1 . C2`. */
export function writtenConstants(desired: TableContents, set: string): Set<string> {
  const written = new Set<string>();
  const marker = `update @${set} `;
  for (const c of desired.chains) {
    const rules = printedRules(c);
    // One look at a chain printed whole passes over the many chains without such a rule.
    const block = rules.block?.();
    if (block != null && !block.includes(marker)) continue;
    for (let k = 0; k < rules.count; k++) {
      const text = rules.text(k);
      if (!text.includes(marker)) continue;
      for (const s of ruleStatements({ chain: c.chain.name, body: { text } })) {
        if (s.t !== 'update' || s.set !== set) continue;
        const constants = constantsOf(s.key);
        if (constants !== null) written.add(constants);
      }
    }
  }
  return written;
}

/** The live members whose constants (the key after its address) no wanted rule writes. */
export function staleMembers(live: LiveSet, written: Set<string>): Element[] {
  const stale: Element[] = [];
  live.keys.forEach((k, i) => {
    // An address never holds ' . ' (IPv6 is written with colons).
    const at = k.indexOf(SEP);
    if (at >= 0 && !written.has(k.slice(at + SEP.length))) stale.push(live.element(i));
  });
  return stale;
}
