// A transaction: the ordered operations of one `nft -f` run. Writers print it; the
// compiler builds a full replace, the diff builds the smallest change.
import type { Chain, Element, Family, NftSet, Rule, Table } from './objects.js';
import type { TableContents } from './ruleset.js';

export interface TableRef {
  family: Family;
  name: string;
}

export type Op =
  | { verb: 'add' | 'delete'; t: 'table'; table: Table }
  | { verb: 'add' | 'delete' | 'flush'; t: 'chain'; table: TableRef; chain: Chain }
  | { verb: 'add' | 'delete' | 'flush'; t: 'set'; table: TableRef; set: NftSet }
  | { verb: 'add'; t: 'rule'; table: TableRef; rule: Rule }
  | { verb: 'delete'; t: 'rule'; table: TableRef; rule: Rule & { handle: number } }
  | { verb: 'add' | 'delete'; t: 'element'; table: TableRef; set: NftSet; element: Element };

export type Transaction = Op[];

/**
 * Replaces each table whole, in one transaction: `add table` + `delete table` removes the
 * table whether or not it exists (nft 1.0.6 has no `destroy`), then every chain and set
 * is defined before any rule or element refers to it, as the flat syntax requires.
 * (text.ts prints the same steps from a table kept as text: fullReplaceBytes.)
 */
export function fullReplace(tables: TableContents[]): Transaction {
  const ops: Transaction = [];
  for (const t of tables) {
    const ref: TableRef = { family: t.table.family, name: t.table.name };
    ops.push({ verb: 'add', t: 'table', table: { family: ref.family, name: ref.name } });
    ops.push({ verb: 'delete', t: 'table', table: { family: ref.family, name: ref.name } });
    ops.push({ verb: 'add', t: 'table', table: t.table });
    pushContents(ops, t, ref);
  }
  return ops;
}

/** Definitions, then rules, then elements: the order a fresh table needs. */
export function createContents(t: TableContents, ref: TableRef): Transaction {
  const ops: Transaction = [];
  pushContents(ops, t, ref);
  return ops;
}

function pushContents(ops: Transaction, t: TableContents, ref: TableRef): void {
  for (const c of t.chains) ops.push({ verb: 'add', t: 'chain', table: ref, chain: c.chain });
  for (const s of t.sets) ops.push({ verb: 'add', t: 'set', table: ref, set: s.set });
  for (const c of t.chains) for (const rule of c.rules) ops.push({ verb: 'add', t: 'rule', table: ref, rule });
  for (const s of t.sets) for (const element of s.elements) ops.push({ verb: 'add', t: 'element', table: ref, set: s.set, element });
}
