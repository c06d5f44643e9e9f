// nft text, flat: one operation per line in the form knftables and kube-proxy's tests use
// (`add rule ip kube-proxy CHAIN ...`), so a one-endpoint change is a one-line diff.
import { InternalError } from '../diag/diagnostic.js';
import { formatCIDR, formatIP } from '../net/ip.js';
import type { Expr, Stmt, Value, Verdict } from './expr.js';
import type { Chain, Element, KeyPart, NftSet, Rule, Table } from './objects.js';
import type { TableContents } from './ruleset.js';
import { visitFullReplace, type Op, type TableRef, type Transaction } from './transaction.js';

/** Marks print as kube-proxy formats them (Go's %#08x): 0x00004000. */
export function markHex(n: number): string {
  return '0x' + n.toString(16).padStart(8, '0');
}

export function exprText(e: Expr): string {
  switch (e.t) {
    case 'payload':
      return `${e.proto} ${e.field}`;
    case 'meta':
      return e.key === 'l4proto' ? 'meta l4proto' : e.key;
    case 'ct':
      return 'ct state';
    case 'fib':
      return `fib ${e.flag} type`;
    case 'concat':
      return e.parts.map(exprText).join(' . ');
    case 'and':
      return `${exprText(e.left)} and ${markHex(e.mask)}`;
    case 'numgen':
      return `numgen random mod ${e.mod}`;
  }
}

export function valueText(v: Value): string {
  switch (v.t) {
    case 'ip':
      return formatIP(v.ip);
    case 'prefix':
      return formatCIDR(v.cidr);
    case 'num':
      return String(v.n);
    case 'sym':
      return v.s;
    case 'str':
      if (!/^[A-Za-z0-9_.:@+-]+\*?$/.test(v.s)) throw new InternalError(`unprintable string ${JSON.stringify(v.s)}`);
      return `"${v.s}"`;
    case 'setref':
      return `@${v.name}`;
    case 'anonset':
      return `{ ${v.items.map(valueText).join(' , ')} }`;
  }
}

export function verdictText(v: Verdict): string {
  return 'target' in v ? `${v.kind} ${v.target}` : v.kind;
}

export function stmtText(s: Stmt): string {
  switch (s.t) {
    case 'match':
      if (s.left.t === 'and') return `${exprText(s.left)} ${s.op} ${valueText(s.right)}`;
      return s.op === '==' ? `${exprText(s.left)} ${valueText(s.right)}` : `${exprText(s.left)} != ${valueText(s.right)}`;
    case 'vmap':
      return `${exprText(s.key)} vmap @${s.map}`;
    case 'numgen-vmap':
      return `numgen random mod ${s.mod} vmap { ${s.targets.map((v, i) => `${i} : ${verdictText(v)}`).join(' , ')} }`;
    case 'verdict':
      return verdictText(s.v);
    case 'mark-set':
      return `mark set mark ${s.op} ${markHex(s.value)}`;
    case 'masquerade':
      return s.fullyRandom ? 'masquerade fully-random' : 'masquerade';
    case 'dnat':
      return s.ip.family === 6 ? `dnat to [${formatIP(s.ip)}]:${s.port}` : `dnat to ${formatIP(s.ip)}:${s.port}`;
    case 'update':
      return `update @${s.set} { ${exprText(s.key)} }`;
    case 'reject':
      return 'reject';
  }
}

export function ruleBodyText(stmts: Stmt[]): string {
  return stmts.map(stmtText).join(' ');
}

function keyPartText(p: KeyPart): string {
  return p.t === 'ip' ? formatIP(p.ip) : p.t === 'proto' ? p.name : String(p.n);
}

/** `{ key comment "c" : verdict }` for add; just `{ key }` for delete (nft ignores the rest). */
export function elementText(e: Element, forAdd: boolean): string {
  const key = e.key.map(keyPartText).join(' . ');
  const comment = forAdd && e.comment !== undefined ? ` comment "${e.comment}"` : '';
  const value = forAdd && e.value ? ` : ${verdictText(e.value)}` : '';
  return `{ ${key}${comment}${value} }`;
}

function setSpec(s: NftSet): string {
  const parts = [`type ${s.keyType.join(' . ')}${s.kind === 'map' ? ' : verdict' : ''}`];
  if (s.flags?.length) parts.push(`flags ${s.flags.join(',')}`);
  if (s.timeoutSeconds !== undefined) parts.push(`timeout ${s.timeoutSeconds}s`);
  if (s.comment !== undefined) parts.push(`comment "${s.comment}"`);
  return `{ ${parts.map((p) => `${p} ;`).join(' ')} }`;
}

/** "ip kube-proxy": the words that name a table in every operation. */
function tableWords(t: TableRef): string {
  return `${t.family} ${t.name}`;
}

function tableLine(verb: 'add' | 'delete', t: Table): string {
  const head = `${verb} table ${tableWords(t)}`;
  return verb === 'add' && t.comment !== undefined ? `${head} { comment "${t.comment}" ; }` : head;
}

function chainAddLine(table: string, c: Chain): string {
  const head = `add chain ${table} ${c.name}`;
  const parts: string[] = [];
  const b = c.base;
  if (b) {
    parts.push(`type ${b.type} hook ${b.hook} priority ${b.priority} ;`);
    if (b.policy) parts.push(`policy ${b.policy} ;`);
  }
  if (c.comment !== undefined) parts.push(`comment "${c.comment}" ;`);
  return parts.length ? `${head} { ${parts.join(' ')} }` : head;
}

function setAddLine(table: string, s: NftSet): string {
  return `add ${s.kind} ${table} ${s.name} ${setSpec(s)}`;
}

function ruleAddLine(table: string, r: Rule): string {
  const comment = r.comment !== undefined ? ` comment "${r.comment}"` : '';
  return `add rule ${table} ${r.chain} ${r.text ?? ruleBodyText(r.stmts)}${comment}`;
}

function elementLine(verb: 'add' | 'delete', table: string, s: NftSet, e: Element): string {
  return `${verb} element ${table} ${s.name} ${elementText(e, verb === 'add')}`;
}

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
      return elementLine(op.verb, tableWords(op.table), op.set, op.element);
  }
}

/** The whole transaction as text, one line per operation, ending in a newline. */
export function transactionText(tx: Transaction): string {
  return tx.length === 0 ? '' : tx.map(opText).join('\n') + '\n';
}

// About this many characters of text become one chunk of bytes.
const CHUNK_CHARS = 1 << 18;

/** Hands chunks of bytes over one at a time; each is valid only until the sink returns. */
export type ByteSink = (chunk: Uint8Array) => void;

/**
 * Lines of text turned into chunks of UTF-8 bytes, each ending at a line end, through one
 * buffer used again for every chunk. A large ruleset is hundreds of megabytes: it is never
 * one string, and it never piles up as buffers either (V8 counts their memory and answers
 * with full collections of the heap, about one per 64 MB written).
 */
export class ByteChunks {
  private text = '';
  private buf = Buffer.allocUnsafe(3 * CHUNK_CHARS);

  constructor(private readonly sink: ByteSink) {}

  line(s: string): void {
    this.text += s + '\n';
    if (this.text.length >= CHUNK_CHARS) this.flush();
  }

  finish(): void {
    this.flush();
  }

  private flush(): void {
    if (this.text === '') return;
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (3 * this.text.length > this.buf.length) this.buf = Buffer.allocUnsafe(3 * this.text.length);
    const n = this.buf.write(this.text, 0, 'utf8');
    this.text = '';
    this.sink(this.buf.subarray(0, n));
  }
}

/** Output that is written as it is made: chunks of bytes handed to a sink, one at a time. */
export type ChunkWriter = (sink: ByteSink) => void;

/**
 * fullReplace(tables) as text (the same as transactionText of it), printed step by step
 * without making an operation of each step, as chunks of bytes when the writer runs.
 */
export function fullReplaceBytes(tables: TableContents[]): ChunkWriter {
  return (sink) => {
    const out = new ByteChunks(sink);
    let ref: TableRef | undefined;
    let words = '';
    const wordsOf = (t: TableRef) => (t === ref ? words : ((ref = t), (words = tableWords(t))));
    visitFullReplace(tables, {
      table: (verb, table) => out.line(tableLine(verb, table)),
      chain: (t, chain) => out.line(chainAddLine(wordsOf(t), chain)),
      set: (t, set) => out.line(setAddLine(wordsOf(t), set)),
      rule: (t, rule) => out.line(ruleAddLine(wordsOf(t), rule)),
      element: (t, set, element) => out.line(elementLine('add', wordsOf(t), set, element)),
    });
    out.finish();
  };
}
