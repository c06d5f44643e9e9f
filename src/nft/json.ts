// libnftables JSON. Rules and elements are written in the canonical form that
// `nft -j list ruleset` prints (nft 1.0.6, checked against real nft in the system tests),
// so the same functions serve `--format json` and the comparison inside `diff`. Expressions,
// values and verdicts are written by expr-json.ts; statements, each by its kind (stmt/).
//
// What JSON input cannot carry on nft 1.0.6 (README, "What the nftables output is"): table, chain, set and
// map comments are ignored by the parser, and the set flag "dynamic" is refused, so it is
// left out; base chain priorities are integers.
import { formatIP } from '../net/ip.js';
import type { Family, Stmt } from './expr.js';
import { verdictJson, type Json } from './expr-json.js';
import { ruleStmts, type Element, type KeyPart, type NftSet } from './objects.js';
import { formsOf } from './stmt/index.js';
import type { Op, Transaction } from './transaction.js';

/** A statement as libnftables JSON: its kind's JSON form (stmt/<kind>.ts). */
export function stmtJson(s: Stmt, family: Family): Json {
  return formsOf(s).json(s, family);
}

function keyPartJson(p: KeyPart): Json {
  return p.t === 'ip' ? formatIP(p.ip) : p.t === 'proto' ? p.name : p.n;
}

export function elementKeyJson(e: Element): Json {
  return e.key.length === 1 ? keyPartJson(e.key[0]) : { concat: e.key.map(keyPartJson) };
}

/** One element as it appears in an `elem` array. */
export function elementJson(e: Element, forAdd: boolean): Json {
  let key = elementKeyJson(e);
  if (forAdd && e.comment !== undefined) key = { elem: { val: key, comment: e.comment } };
  if (forAdd && e.data) return [key, { concat: e.data.map(keyPartJson) }];
  return forAdd && e.value ? [key, verdictJson(e.value)] : key;
}

export function setJson(s: NftSet, table: { family: Family; name: string }): Json {
  const body: { [k: string]: Json } = {
    family: table.family,
    table: table.name,
    name: s.name,
    type: s.keyType.length === 1 ? s.keyType[0] : s.keyType,
  };
  // nft lists a data map's value types as one string, `ipv4_addr . inet_service`.
  if (s.kind === 'map') body.map = s.data ? s.data.types.join(' . ') : 'verdict';
  if (s.size !== undefined) body.size = s.size;
  const flags = (s.flags ?? []).filter((f) => f !== 'dynamic');
  if (flags.length) body.flags = flags;
  if (s.timeoutSeconds !== undefined) body.timeout = s.timeoutSeconds;
  if (s.comment !== undefined) body.comment = s.comment;
  return { [s.kind]: body };
}

export function opJson(op: Op): Json {
  const tableRef = op.t === 'table' ? op.table : op.table;
  const base = { family: tableRef.family, table: tableRef.name };
  switch (op.t) {
    case 'table':
      return { [op.verb]: { table: { family: op.table.family, name: op.table.name } } };
    case 'chain': {
      const body: { [k: string]: Json } = { ...base, name: op.chain.name };
      const b = op.chain.base;
      if (op.verb === 'add' && b) {
        Object.assign(body, { type: b.type, hook: b.hook, prio: b.priority, policy: b.policy ?? 'accept' });
      }
      return { [op.verb]: { chain: body } };
    }
    case 'set':
      if (op.verb === 'add') return { add: setJson(op.set, tableRef) };
      return { [op.verb]: { [op.set.kind]: { ...base, name: op.set.name } } };
    case 'rule': {
      if (op.verb === 'delete') return { delete: { rule: { ...base, chain: op.rule.chain, handle: op.rule.handle } } };
      const body: { [k: string]: Json } = { ...base, chain: op.rule.chain, expr: ruleStmts(op.rule).map((s) => stmtJson(s, tableRef.family)) };
      if (op.rule.comment !== undefined) body.comment = op.rule.comment;
      return { add: { rule: body } };
    }
    case 'element':
      return { [op.verb]: { element: { ...base, name: op.set.name, elem: [elementJson(op.element, op.verb === 'add')] } } };
  }
}

/** The transaction as one libnftables JSON document for `nft -j -f`. */
export function transactionJson(tx: Transaction): string {
  const items: Json[] = [{ metainfo: { json_schema_version: 1 } }, ...tx.map(opJson)];
  return JSON.stringify({ nftables: items }) + '\n';
}
