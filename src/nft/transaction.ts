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

/** The steps of a full replace, for whoever needs them: operations, or printed lines. */
export interface ReplaceVisitor {
  table(verb: 'add' | 'delete', table: Table): void;
  chain(ref: TableRef, chain: Chain): void;
  set(ref: TableRef, set: NftSet): void;
  rule(ref: TableRef, rule: Rule): void;
  element(ref: TableRef, set: NftSet, element: Element): void;
}

/**
 * Replaces each table whole, in one transaction: `add table` + `delete table` removes the
 * table whether or not it exists (nft 1.0.6 has no `destroy`), then every chain and set
 * is defined before any rule or element refers to it, as the flat syntax requires.
 */
export function fullReplace(tables: TableContents[]): Transaction {
  const ops: Transaction = [];
  visitFullReplace(tables, opsVisitor(ops));
  return ops;
}

/** The steps of fullReplace in order, without making an operation of each (a printer needs none). */
export function visitFullReplace(tables: TableContents[], v: ReplaceVisitor): void {
  for (const t of tables) {
    const ref: TableRef = { family: t.table.family, name: t.table.name };
    v.table('add', { family: ref.family, name: ref.name });
    v.table('delete', { family: ref.family, name: ref.name });
    v.table('add', t.table);
    visitContents(t, ref, v);
  }
}

/** Definitions, then rules, then elements: the order a fresh table needs. */
export function createContents(t: TableContents, ref: TableRef): Transaction {
  const ops: Transaction = [];
  visitContents(t, ref, opsVisitor(ops));
  return ops;
}

function visitContents(t: TableContents, ref: TableRef, v: ReplaceVisitor): void {
  for (const c of t.chains) v.chain(ref, c.chain);
  for (const s of t.sets) v.set(ref, s.set);
  for (const c of t.chains) for (const rule of c.rules) v.rule(ref, rule);
  for (const s of t.sets) for (const element of s.elements) v.element(ref, s.set, element);
}

function opsVisitor(ops: Transaction): ReplaceVisitor {
  return {
    table: (verb, table) => ops.push({ verb, t: 'table', table }),
    chain: (table, chain) => ops.push({ verb: 'add', t: 'chain', table, chain }),
    set: (table, set) => ops.push({ verb: 'add', t: 'set', table, set }),
    rule: (table, rule) => ops.push({ verb: 'add', t: 'rule', table, rule }),
    element: (table, set, element) => ops.push({ verb: 'add', t: 'element', table, set, element }),
  };
}
