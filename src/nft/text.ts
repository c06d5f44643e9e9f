// nft text, flat: one operation per line in the form knftables and kube-proxy's tests use
// (`add rule ip kube-proxy CHAIN ...`), so a one-endpoint change is a one-line diff.
import { InternalError } from '../diag/diagnostic.js';
import { formatCIDR, formatIP } from '../net/ip.js';
import type { Expr, Stmt, Value, Verdict } from './expr.js';
import type { Chain, Element, KeyPart, NftSet, Rule, Table } from './objects.js';
import type { TableText } from './text-table.js';
import type { Op, TableRef, Transaction } from './transaction.js';

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

/** A rule as it follows "add rule TABLE CHAIN": its statements, then its comment. */
export function ruleText(r: Rule): string {
  const body = ruleBodyText(r.stmts);
  return r.comment !== undefined ? `${body} comment "${r.comment}"` : body;
}

function ruleAddLine(table: string, r: Rule): string {
  return `add rule ${table} ${r.chain} ${ruleText(r)}`;
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

// Chunks of about this many bytes are handed over.
const CHUNK_BYTES = 1 << 18;

/** Hands chunks of bytes over one at a time; each is valid only until the sink returns. */
export type ByteSink = (chunk: Uint8Array) => void;

/**
 * Text and bytes turned into chunks of UTF-8 bytes, each ending at a line end, written
 * straight into one buffer used again for every chunk. A large ruleset is hundreds of
 * megabytes: it is never one string, and it never piles up as buffers either (V8 counts
 * their memory and answers with full collections of the heap, about one per 64 MB written).
 */
export class ByteChunks {
  private buf = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  private at = 0;

  constructor(private readonly sink: ByteSink) {}

  /** Appends text, UTF-8 encoded. */
  text(s: string): void {
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (3 * s.length > this.buf.length - this.at) this.grow(3 * s.length);
    this.at += this.buf.write(s, this.at);
  }

  /** Appends bytes from start to end (exclusive). */
  bytes(b: Uint8Array, start: number, end: number): void {
    if (end - start > this.buf.length - this.at) this.grow(end - start);
    this.buf.set(b.subarray(start, end), this.at);
    this.at += end - start;
  }

  /** Ends a line; a chunk ends only here. */
  endLine(): void {
    if (this.at === this.buf.length) this.grow(1);
    this.buf[this.at++] = 0x0a;
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  line(s: string): void {
    this.text(s);
    this.endLine();
  }

  finish(): void {
    this.flush();
  }

  private flush(): void {
    if (this.at === 0) return;
    this.sink(this.buf.subarray(0, this.at));
    this.at = 0;
  }

  /** A line longer than a chunk: a larger buffer, with the line so far. */
  private grow(need: number): void {
    const b = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + need));
    this.buf.copy(b, 0, 0, this.at);
    this.buf = b;
  }
}

/** Output that is written as it is made: chunks of bytes handed to a sink, one at a time. */
export type ChunkWriter = (sink: ByteSink) => void;

/**
 * fullReplace of tables as text, the same as transactionText(fullReplace(tables)) of the
 * same tables built with their statements, as chunks of bytes when the writer runs.
 */
export function fullReplaceBytes(tables: TableText[]): ChunkWriter {
  return (sink) => {
    const out = new ByteChunks(sink);
    for (const t of tables) {
      const words = tableWords(t.table);
      // As fullReplace: the table made if missing and deleted, then made again with everything in it.
      const ref = { family: t.table.family, name: t.table.name };
      out.line(tableLine('add', ref));
      out.line(tableLine('delete', ref));
      out.line(tableLine('add', t.table));
      const chainHead = `add chain ${words} `;
      for (const c of t.chains) {
        if (c.base || c.comment !== undefined) out.line(chainAddLine(words, c));
        else {
          out.text(chainHead);
          out.text(c.name);
          out.endLine();
        }
      }
      for (const s of t.sets) out.line(setAddLine(words, s.set));
      writeRules(out, t, `add rule ${words} `);
      for (const s of t.sets) for (const e of s.elements) out.line(elementLine('add', words, s.set, e));
    }
    out.finish();
  };
}

function writeRules(out: ByteChunks, t: TableText, ruleHead: string): void {
  const { pieces, piece, start, end, first } = t.rules;
  for (let i = 0; i < t.chains.length; i++) {
    if (first[i] === first[i + 1]) continue;
    const head = `${ruleHead}${t.chains[i].name} `;
    for (let k = first[i]; k < first[i + 1]; k++) {
      out.text(head);
      out.bytes(pieces[piece[k]], start[k], end[k]);
      out.endLine();
    }
  }
}
