// nft text of what statements are made of: expressions, values and verdicts, and the
// TextOut they are printed to. The statement kinds (stmt/*.ts) print themselves with these,
// and text.ts prints statements through the kinds; so this module imports nothing that
// imports the kinds, and any of them may be loaded first.
import { assertNever, InternalError } from '../diag/diagnostic.js';
import { formatIP, type IP } from '../net/ip.js';
import type { Expr, Value, Verdict } from './expr.js';

/** Marks print as kube-proxy formats them (Go's %#08x): 0x00004000. */
export function markHex(n: number): string {
  return '0x' + n.toString(16).padStart(8, '0');
}

/**
 * Where nft text is printed to: a string (StringOut, for stmtText and the like), or the
 * UTF-8 bytes of a table kept only to be printed (text-table.ts), which then never makes
 * the strings at all. Statements are printed once, by the write* functions, for both.
 */
export interface TextOut {
  /** Text as it is. */
  str(s: string): void;
  /**
   * A chain or set name: ASCII (checkName refuses anything else, and a reference to a
   * name that no chain or set has fails the table), so each character is its byte.
   */
  name(s: string): void;
  /** A number in decimal, as String(n). */
  num(n: number): void;
  /** An address as formatIP prints it. */
  ip(ip: IP): void;
}

/**
 * Text printed to one string. The parts are joined at the end, into one flat string: a
 * string built by `+=` is a tree of pieces, which every comparison must first copy into
 * one and which the garbage collector copies piece by piece while it lives.
 */
export class StringOut implements TextOut {
  private readonly parts: string[] = [];
  str(s: string): void {
    this.parts.push(s);
  }
  name(s: string): void {
    this.parts.push(s);
  }
  num(n: number): void {
    this.parts.push(String(n));
  }
  ip(ip: IP): void {
    this.parts.push(formatIP(ip));
  }
  get text(): string {
    return this.parts.join('');
  }
}

/** What `write` prints, as one string. */
export function printed(write: (o: StringOut) => void): string {
  const o = new StringOut();
  write(o);
  return o.text;
}

export function writeExpr(o: TextOut, e: Expr): void {
  switch (e.t) {
    case 'payload':
      o.str(e.proto);
      o.str(' ');
      o.str(e.field);
      return;
    case 'meta':
      o.str(e.key === 'l4proto' ? 'meta l4proto' : e.key);
      return;
    case 'ct':
      o.str('ct ');
      o.str(e.key);
      return;
    case 'ct-original':
      o.str('ct original ');
      o.str(e.key);
      return;
    case 'jhash':
      o.str('jhash ');
      writeExpr(o, e.key);
      o.str(' mod ');
      o.num(e.mod);
      o.str(' seed 0x');
      o.str(e.seed.toString(16));
      return;
    case 'fib':
      o.str('fib ');
      o.str(e.flag);
      o.str(' type');
      return;
    case 'concat':
      for (let i = 0; i < e.parts.length; i++) {
        if (i > 0) o.str(' . ');
        writeExpr(o, e.parts[i]);
      }
      return;
    case 'and':
      writeExpr(o, e.left);
      o.str(' and ');
      o.str(markHex(e.mask));
      return;
    case 'numgen':
      o.str('numgen random mod ');
      o.num(e.mod);
      if (e.offset) {
        o.str(' offset ');
        o.num(e.offset);
      }
      return;
    default:
      assertNever(e, 'expression kind');
  }
}

export function writeValue(o: TextOut, v: Value): void {
  switch (v.t) {
    case 'ip':
      o.ip(v.ip);
      return;
    case 'prefix': // formatCIDR
      o.ip(v.cidr.addr);
      o.str('/');
      o.num(v.cidr.prefix);
      return;
    case 'num':
      o.num(v.n);
      return;
    case 'sym':
      o.str(v.s);
      return;
    case 'str':
      if (!/^[A-Za-z0-9_.:@+-]+\*?$/.test(v.s)) throw new InternalError(`unprintable string ${JSON.stringify(v.s)}`);
      o.str('"');
      o.str(v.s);
      o.str('"');
      return;
    case 'setref':
      o.str('@');
      o.name(v.name);
      return;
    case 'anonset':
      o.str('{ ');
      for (let i = 0; i < v.items.length; i++) {
        if (i > 0) o.str(' , ');
        writeValue(o, v.items[i]);
      }
      o.str(' }');
      return;
    default:
      assertNever(v, 'value kind');
  }
}

export function writeVerdict(o: TextOut, v: Verdict): void {
  o.str(v.kind);
  if ('target' in v) {
    o.str(' ');
    o.name(v.target);
  }
}

export const exprText = (e: Expr): string => printed((o) => writeExpr(o, e));
export const valueText = (v: Value): string => printed((o) => writeValue(o, v));
export const verdictText = (v: Verdict): string => printed((o) => writeVerdict(o, v));
