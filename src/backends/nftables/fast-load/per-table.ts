// What the fast-load emitters remember while one table is built: the key ranges taken
// in each map, the ClusterIP draw rules already written, the shared firewall chains and
// the sources each checks. Kept per table builder, so that two tables (two families, or
// a table compiled twice) never see each other's.
import type { TableBuilder } from '../../../nft/ruleset.js';

/** A table's own value of `init()`, made on the first ask of each builder. */
export function perTable<T>(init: () => T): (b: TableBuilder) => T {
  const byBuilder = new WeakMap<TableBuilder, T>();
  return (b) => {
    let v = byBuilder.get(b);
    if (v === undefined) byBuilder.set(b, (v = init()));
    return v;
  };
}
