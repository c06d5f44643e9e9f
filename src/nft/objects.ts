// nftables objects as typed values. Each is checked where it is made (names, types,
// references), so a malformed object is our bug and fails loudly before anything prints.
import { InternalError } from '../diag/diagnostic.js';
import type { IP } from '../net/ip.js';
import type { Expr, Family, Stmt, Verdict } from './expr.js';

export type { Family };

// nft identifiers: a letter, underscore or dot first, then [A-Za-z0-9_./-]; the kernel
// limits names to 256 bytes (NFT_NAME_MAXLEN), as knftables' NameLengthMax.
const NAME_RE = /^[A-Za-z_.][A-Za-z0-9_./-]*$/;
export const NAME_LENGTH_MAX = 256;

export function checkName(what: string, name: string): void {
  if (!NAME_RE.test(name) || name.length > NAME_LENGTH_MAX) {
    throw new InternalError(`invalid nft ${what} name ${JSON.stringify(name)}`);
  }
}

// Comments are printed inside double quotes; nft has no escape for a quote, so a comment
// that could end its string is refused here rather than escaped.
const COMMENT_RE = /^[^"\\\x00-\x1f\x7f]{0,128}$/;
export function checkComment(comment: string | undefined): void {
  if (comment !== undefined && !COMMENT_RE.test(comment)) {
    throw new InternalError(`comment ${JSON.stringify(comment)} cannot be printed safely`);
  }
}

export type Hook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';

export interface BaseChainSpec {
  type: 'filter' | 'nat';
  hook: Hook;
  priority: number; // numeric: nft 1.0.6 refuses "dstnat" outside prerouting
  policy?: 'accept' | 'drop';
}

export interface Table {
  family: Family;
  name: string;
  comment?: string;
}

export interface Chain {
  name: string;
  base?: BaseChainSpec;
  comment?: string;
}

/** 'integer' is what nft lists for a key part declared by `typeof` with an expression of no type name (numgen). */
export type DataType = 'ipv4_addr' | 'ipv6_addr' | 'inet_proto' | 'inet_service' | 'integer';

export interface NftSet {
  name: string;
  /** 'set' holds keys; 'map' maps keys to verdicts. */
  kind: 'set' | 'map';
  /** The key's types as the JSON listing shows them (what the diff compares). */
  keyType: DataType[];
  /** Declared by `typeof EXPR` instead of `type ...` (text only: nft 1.0.6's JSON cannot declare it). */
  typeof?: Expr;
  /**
   * A map whose values are data (an address and a port), not verdicts: the values' types
   * as the JSON listing shows them, and the expression `typeof` declares them by.
   */
  data?: { types: DataType[]; typeof: Expr };
  /** The most elements it may hold; the kernel's default when absent. */
  size?: number;
  flags?: ('dynamic' | 'timeout' | 'interval')[];
  timeoutSeconds?: number;
  comment?: string;
}

export type KeyPart =
  | { t: 'ip'; ip: IP }
  | { t: 'proto'; name: 'tcp' | 'udp' | 'sctp' }
  | { t: 'port'; n: number }
  /** A part of type 'integer' (32 bits): only in live elements of a set declared by `typeof ... numgen`. */
  | { t: 'int'; n: number };

export interface Element {
  set: string;
  key: KeyPart[];
  value?: Verdict; // verdict maps only
  /** The value of an element of a data map (NftSet.data). */
  data?: KeyPart[];
  comment?: string;
}

/**
 * Elements `base : data[0]`, `base+1 : data[1]`, ... of a data map keyed by one integer
 * (TableBuilder.elementRange): kept and printed without an Element each.
 */
export interface KeyRange {
  base: number;
  data: KeyPart[][];
}

/**
 * What a rule holds: its statements; or only their nft text, for a rule whose statements
 * were not kept (the diff compares and prints the rules of a large table by their text);
 * or, for a live rule with statements kproxc never writes (a hand-made change such as a
 * counter), the sets it names: such a rule is never equal to a wanted one, and the diff
 * replaces it.
 */
export type RuleBody = { stmts: Stmt[] } | { text: string } | { foreign: { setRefs: string[] } };

export interface Rule {
  chain: string;
  body: RuleBody;
  comment?: string;
  handle?: number; // only for rules read from a live listing
}

/** A rule as the backends make it: always with its statements. */
export interface NewRule {
  chain: string;
  stmts: Stmt[];
  comment?: string;
}

/** The statements of a rule made with them; a rule kept otherwise here is our bug. */
export function ruleStmts(r: Rule): Stmt[] {
  if ('stmts' in r.body) return r.body.stmts;
  throw new InternalError(`rule of ${r.chain} has no statements kept`);
}

export function makeChain(c: Chain): Chain {
  checkName('chain', c.name);
  checkComment(c.comment);
  return c;
}

export function makeSet(s: NftSet): NftSet {
  checkName(s.kind, s.name);
  checkComment(s.comment);
  if (s.keyType.length === 0) throw new InternalError(`${s.kind} ${s.name} has no key type`);
  return s;
}

// A rule's chain and an element's set are not checked here: TableBuilder takes them only
// when that chain or set exists, whose name was checked when it was made.
export function makeRule(r: NewRule): NewRule {
  checkComment(r.comment);
  if (r.stmts.length === 0) throw new InternalError(`empty rule in chain ${r.chain}`);
  for (const s of r.stmts) if (s.t === 'numgen-dnat') checkNumgenDnat(s, r.chain);
  return r;
}

/**
 * A numgen DNAT map has one element per draw (nft refuses an empty map; a draw with no
 * element would end the rule, an element no draw reaches would never be used), and its
 * targets are of one family, the one its `dnat ip`/`dnat ip6` names.
 */
function checkNumgenDnat(s: Extract<Stmt, { t: 'numgen-dnat' }>, chain: string): void {
  const n = s.targets.length;
  if (n === 0 || s.mod !== n) throw new InternalError(`numgen dnat map in chain ${chain} has ${n} targets for mod ${s.mod}`);
  for (const t of s.targets) {
    if (t.ip.family !== s.targets[0].ip.family) throw new InternalError(`numgen dnat map in chain ${chain} mixes address families`);
    if (!(Number.isInteger(t.port) && t.port >= 0 && t.port <= 65535)) throw new InternalError(`port ${t.port} out of range in chain ${chain}`);
  }
}

export const isUint32 = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;

export function makeElement(e: Element): Element {
  checkComment(e.comment);
  for (const p of e.key) {
    if (p.t === 'port' && !(Number.isInteger(p.n) && p.n >= 0 && p.n <= 65535)) {
      throw new InternalError(`port ${p.n} out of range in element of ${e.set}`);
    }
    if (p.t === 'int' && !isUint32(p.n)) throw new InternalError(`integer ${p.n} out of range in element of ${e.set}`);
  }
  return e;
}
