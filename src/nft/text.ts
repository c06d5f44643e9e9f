// nft text, flat: one operation per line in the form knftables and kube-proxy's tests use
// (`add rule ip kube-proxy CHAIN ...`): the diff's transactions. A full replace is printed
// in the nested syntax (nested-text.ts) from the statements printed here. Expressions,
// values and verdicts are printed by expr-text.ts; statements, each by its kind (stmt/).
import { InternalError } from '../diag/diagnostic.js';
import type { Stmt } from './expr.js';
import { printed, writeExpr, writeVerdict, type TextOut } from './expr-text.js';
import type { BaseChainSpec, Chain, Element, KeyPart, KeyRange, NftSet, Rule, Table } from './objects.js';
import { formsOf } from './stmt/index.js';
import type { Op, TableRef, Transaction } from './transaction.js';

/** A statement as nft text: its kind's text form (stmt/<kind>.ts). */
export function writeStmt(o: TextOut, s: Stmt): void {
  formsOf(s).text(o, s);
}

/** A rule as it follows "add rule TABLE CHAIN": its statements, then its comment. */
export function writeRule(o: TextOut, r: Rule): void {
  writeRuleText(o, r);
  if (r.comment !== undefined) writeComment(o, r.comment);
}

/** A rule's statements (or its text, for a rule kept as text), without its comment. */
export function writeRuleText(o: TextOut, r: Rule): void {
  const b = r.body;
  if ('text' in b) o.str(b.text);
  else if ('stmts' in b) writeRuleBody(o, b.stmts);
  else throw new InternalError(`a foreign rule of ${r.chain} is never written`);
}

/** What follows a rule's statements, or an element's key, when it has a comment. */
export const COMMENT_OPEN = ' comment "';

export function writeComment(o: TextOut, comment: string): void {
  o.str(COMMENT_OPEN);
  o.str(comment);
  o.str('"');
}

/** Statements as nft text, one after another. */
export function writeRuleBody(o: TextOut, stmts: Stmt[]): void {
  for (let i = 0; i < stmts.length; i++) {
    if (i > 0) o.str(' ');
    writeStmt(o, stmts[i]);
  }
}

export const stmtText = (s: Stmt): string => printed((o) => writeStmt(o, s));
export const ruleBodyText = (stmts: Stmt[]): string => printed((o) => writeRuleBody(o, stmts));
const ruleText = (r: Rule): string => printed((o) => writeRule(o, r));

function writeKeyPart(o: TextOut, p: KeyPart): void {
  if (p.t === 'ip') o.ip(p.ip);
  else if (p.t === 'proto') o.str(p.name);
  else o.num(p.n);
}

/**
 * An element inside the braces: `key comment "c" : verdict` for add; just `key` for delete
 * (nft ignores the rest).
 */
function writeElementMember(o: TextOut, e: Element, forAdd: boolean): void {
  for (let i = 0; i < e.key.length; i++) {
    if (i > 0) o.str(' . ');
    writeKeyPart(o, e.key[i]);
  }
  if (forAdd && e.comment !== undefined) writeComment(o, e.comment);
  if (forAdd && e.value) {
    o.str(' : ');
    writeVerdict(o, e.value);
  }
  if (forAdd && e.data) writeData(o, e.data);
}

/** A data map element's value: ` : A . P`. */
function writeData(o: TextOut, data: KeyPart[]): void {
  o.str(' : ');
  for (let i = 0; i < data.length; i++) {
    if (i > 0) o.str(' . ');
    writeKeyPart(o, data[i]);
  }
}

/** `{ type ... ; flags ... ; timeout Ns ; comment "..." ; }` */
export function writeSetSpec(o: TextOut, s: NftSet): void {
  if (s.typeof) {
    o.str('{ typeof ');
    writeExpr(o, s.typeof);
  } else {
    o.str('{ type ');
    o.str(s.keyType.join(' . '));
  }
  if (s.data) {
    o.str(' : ');
    writeExpr(o, s.data.typeof);
  } else if (s.kind === 'map') o.str(' : verdict');
  o.str(' ;');
  if (s.size !== undefined) {
    o.str(' size ');
    o.num(s.size);
    o.str(' ;');
  }
  if (s.flags?.length) {
    o.str(' flags ');
    o.str(s.flags.join(','));
    o.str(' ;');
  }
  if (s.timeoutSeconds !== undefined) {
    o.str(' timeout ');
    o.num(s.timeoutSeconds);
    o.str('s ;');
  }
  if (s.comment !== undefined) {
    o.str(' comment "');
    o.str(s.comment);
    o.str('" ;');
  }
  o.str(' }');
}

/** "ip kube-proxy": the words that name a table in every operation. */
export function tableWords(t: TableRef): string {
  return `${t.family} ${t.name}`;
}

export function tableLine(verb: 'add' | 'delete', t: Table): string {
  const head = `${verb} table ${tableWords(t)}`;
  return verb === 'add' && t.comment !== undefined ? `${head} { comment "${t.comment}" ; }` : head;
}

/** A base chain's `type T hook H priority P ;` and its `policy X ;`, in both the flat and the nested form. */
export function writeBaseChainSpec(o: TextOut, b: BaseChainSpec): void {
  o.str(`type ${b.type} hook ${b.hook} priority `);
  o.num(b.priority);
  o.str(' ;');
  if (b.policy) o.str(` policy ${b.policy} ;`);
}

function writeChainAdd(o: TextOut, table: string, c: Chain): void {
  o.str('add chain ');
  o.str(table);
  o.str(' ');
  o.str(c.name);
  const b = c.base;
  if (!b && c.comment === undefined) return;
  o.str(' {');
  if (b) {
    o.str(' ');
    writeBaseChainSpec(o, b);
  }
  if (c.comment !== undefined) {
    o.str(' comment "');
    o.str(c.comment);
    o.str('" ;');
  }
  o.str(' }');
}

export const chainAddLine = (table: string, c: Chain): string => printed((o) => writeChainAdd(o, table, c));

export function writeSetAdd(o: TextOut, table: string, s: NftSet): void {
  o.str('add ');
  o.str(s.kind);
  o.str(' ');
  o.str(table);
  o.str(' ');
  o.str(s.name);
  o.str(' ');
  writeSetSpec(o, s);
}

const setAddLine = (table: string, s: NftSet): string => printed((o) => writeSetAdd(o, table, s));

function ruleAddLine(table: string, r: Rule): string {
  return `add rule ${table} ${r.chain} ${ruleText(r)}`;
}

export function writeElementLine(o: TextOut, verb: 'add' | 'delete', table: string, s: NftSet, e: Element): void {
  writeElementsLine(o, verb, table, s, [e]);
}

/** `VERB element TABLE SET { E1, E2, ... }`: elements of one set in one command, on one line. */
function writeElementsLine(o: TextOut, verb: 'add' | 'delete', table: string, s: NftSet, elements: readonly Element[]): void {
  o.str(verb);
  o.str(' element ');
  o.str(table);
  o.str(' ');
  o.str(s.name);
  o.str(' { ');
  elements.forEach((e, i) => {
    if (i > 0) o.str(', ');
    writeElementMember(o, e, verb === 'add');
  });
  o.str(' }');
}

/**
 * All of a set's elements in one `add element` command, one element a line:
 * `add element ip kube-proxy SET {`, `\tKEY : DATA,` ..., `}`. nft parses and sends one
 * command instead of one per element (fast-load's text form: docs/fast-load.md).
 */
export function writeElementBlock(o: TextOut, table: string, s: NftSet, elements: readonly Element[]): void {
  writeBlock(o, table, s, elements.length, (i) => writeElementMember(o, elements[i], true));
}

/** writeElementBlock's text for a data map's key ranges, made from the ranges themselves. */
export function writeRangeBlock(o: TextOut, table: string, s: NftSet, ranges: readonly KeyRange[]): void {
  let count = 0;
  for (const r of ranges) count += r.data.length;
  let range = 0;
  let offset = 0;
  writeBlock(o, table, s, count, () => {
    const { base, data } = ranges[range];
    o.num(base + offset);
    writeData(o, data[offset]);
    if (++offset === data.length) {
      range++;
      offset = 0;
    }
  });
}

/** `add element TABLE SET {`, then `count` members (written in order by `member`) a line each, then `}`. */
function writeBlock(o: TextOut, table: string, s: NftSet, count: number, member: (i: number) => void): void {
  o.str('add element ');
  o.str(table);
  o.str(' ');
  o.str(s.name);
  o.str(' {\n');
  for (let i = 0; i < count; i++) {
    o.str('\t');
    member(i);
    o.str(i < count - 1 ? ',\n' : '\n');
  }
  o.str('}');
}

type ElementOp = Extract<Op, { t: 'element' }>;

const elementsLine = (ops: readonly ElementOp[]): string =>
  printed((o) => writeElementsLine(o, ops[0].verb, tableWords(ops[0].table), ops[0].set, ops.map((op) => op.element)));

export function opText(op: Op): string {
  switch (op.t) {
    case 'table':
      return tableLine(op.verb, op.table);
    case 'chain':
      return op.verb === 'add' ? chainAddLine(tableWords(op.table), op.chain) : `${op.verb} chain ${tableWords(op.table)} ${op.chain.name}`;
    case 'set':
      return op.verb === 'add' ? setAddLine(tableWords(op.table), op.set) : `${op.verb} ${op.set.kind} ${tableWords(op.table)} ${op.set.name}`;
    case 'rule':
      if (op.verb === 'delete') return `delete rule ${tableWords(op.table)} ${op.rule.chain} handle ${op.rule.handle}`;
      return ruleAddLine(tableWords(op.table), op.rule);
    case 'element':
      return elementsLine([op]);
  }
}

/** Whether `b` adds to or deletes from the same set as `a`, so that one command can do both. */
const sameElementCommand = (a: ElementOp, b: Op): b is ElementOp =>
  b.t === 'element' && b.verb === a.verb && b.set.name === a.set.name && b.table.family === a.table.family && b.table.name === a.table.name;

/**
 * The whole transaction as text, ending in a newline: one line per operation, except that
 * consecutive additions to (or deletions from) one set are one command, as nft takes them:
 * a diff that moves an endpoint reads as a few lines, and nft parses and sends one command
 * instead of one per element.
 */
export function transactionText(tx: Transaction): string {
  const lines: string[] = [];
  for (let i = 0; i < tx.length; ) {
    const op = tx[i];
    if (op.t !== 'element') {
      lines.push(opText(op));
      i++;
      continue;
    }
    let end = i + 1;
    while (end < tx.length && sameElementCommand(op, tx[end])) end++;
    lines.push(elementsLine(tx.slice(i, end) as ElementOp[]));
    i = end;
  }
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}
