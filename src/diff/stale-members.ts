// The members of a live set the wanted table manages (SetContents.managed: fast-load's
// table-wide affinity set, client address . A . B, where the constants A . B stand for an
// endpoint) that belong to no endpoint of the wanted table. kube-proxy deletes an endpoint's
// set with the endpoint; here its clients' elements are deleted instead, so that an
// endpoint removed and added again before they expire does not get its old clients back.
//
// Which members are wanted is what the compile recorded: the parts after the address that
// the rules of every wanted endpoint write (ManagedMembers: their owner is the endpoint).
import type { Element } from '../nft/objects.js';
import type { ManagedMembers } from '../nft/ruleset.js';
import type { LiveSet } from '../live/view.js';

const SEP = ' . ';

/** The live members whose parts after the address no wanted endpoint's rules write. */
export function staleMembers(live: LiveSet, managed: ManagedMembers): Element[] {
  const stale: Element[] = [];
  live.keys.forEach((k, i) => {
    // An address never holds ' . ' (IPv6 is written with colons).
    const at = k.indexOf(SEP);
    if (at >= 0 && !managed.owners.has(k.slice(at + SEP.length))) stale.push(live.element(i));
  });
  return stale;
}
