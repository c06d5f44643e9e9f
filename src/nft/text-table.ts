// A table kept as printed text: compile's text output, and the diff's wanted tables (read
// back by printed-chains.ts). Each rule is checked as in any table, then printed as its
// line in its chain's block (nested-text.ts), from its statements straight into a shared
// buffer as UTF-8, instead of being kept as a Rule object and a string: at 10,000
// Services there are 250,000 rules, and objects that live to the end are copied by every
// young-generation collection. Printing as bytes makes no strings on the way either, and
// a chain's opening lines and the rules added right after them are printed out as one
// piece.
import { InternalError } from '../diag/diagnostic.js';
import type { Chain, NewRule, Rule, Table } from './objects.js';
import { BaseTableBuilder, type SetContents, type TableContents } from './ruleset.js';
import { PrintedLines, printedChain } from './printed-chains.js';
import { tableWords, writeComment, writeElementLine, writeRuleBody } from './text.js';
import { CHAIN_BLOCK_CLOSE, RULE_INDENT, writeChainBlockOpen, writeSetInBlock } from './nested-text.js';
import { Utf8Out } from './utf8-out.js';
import { ADDRESS, PORT, rulePieces, type AddressPortRule, type RulePieces } from './rule-template.js';
import type { IP } from '../net/ip.js';

/**
 * Printed items, each in one piece: item k is pieces[piece[k]] from start[k] to end[k].
 * A piece is UTF-8 bytes as a string of one character per byte (latin1).
 */
export interface PrintedItems {
  pieces: string[];
  /** Whether piece i is ASCII: then its characters are the text, not only its bytes. */
  ascii: boolean[];
  piece: number[];
  start: number[];
  end: number[];
}

export interface TableText {
  table: Table;
  /** The set and map lines of the table's block, line ends included, sets sorted by name. */
  sets: PrintedItems;
  /**
   * The chains' blocks in the order the chains were made: each chain's opening lines,
   * which close the block of the chain before (see chainAdded), then its rule lines.
   * The last block is left open.
   */
  chains: PrintedItems;
  /** How many chains there are. */
  chainCount: number;
  /** The "add element" lines, line ends included, by set, each set's sorted by key. */
  elements: PrintedItems;
}

/**
 * A template's rule in pieces with its text as UTF-8 bytes, encoded once: 200,000 endpoint
 * rules copy them instead of encoding the same words again each time.
 */
interface EncodedPieces {
  pieces: (Uint8Array | typeof ADDRESS | typeof PORT)[];
  ascii: boolean;
}

function encodedPieces(pieces: RulePieces): EncodedPieces {
  let ascii = true;
  const encoded = pieces.map((p) => {
    if (p === ADDRESS || p === PORT) return p;
    const bytes = Buffer.from(p, 'utf8');
    if (bytes.length !== p.length) ascii = false;
    return bytes;
  });
  return { pieces: encoded, ascii };
}

export class TextTableBuilder extends BaseTableBuilder {
  /**
   * `purpose` says what the table is for: printed out (finish), or read back by the diff
   * (contents), which wants only the rules and prints no chain's opening lines.
   */
  constructor(
    table: Table,
    private readonly purpose: 'output' | 'diff' = 'output',
  ) {
    super(table);
  }

  // The chains' opening lines and their rules' lines, in the order printed.
  private readonly rules = new PieceStore();
  // Per item of the store, in the order added: its chain's number.
  private readonly ruleChain: number[] = [];

  // Item number to where its comment starts in its line (few rules have one).
  private readonly commentAt = new Map<number, number>();

  /**
   * A chain's opening lines, printed as it is made: the first item of its chain, so that
   * the rules a chain gets at once follow it in the store and the blocks of chains printed
   * in the order made are copied out in long runs. Each opening but the first closes the
   * block of the chain made before, which in that order is the one before it.
   */
  protected override chainAdded(c: Chain): void {
    if (this.purpose === 'diff') return;
    const number = this.chainList.length - 1;
    const store = this.rules;
    store.begin();
    if (number > 0) store.str(CHAIN_BLOCK_CLOSE);
    writeChainBlockOpen(store, c);
    store.end();
    this.ruleChain.push(number);
  }

  protected keepRule(chain: number, r: NewRule): void {
    const store = this.beginLine();
    writeRuleBody(store, r.stmts);
    if (r.comment !== undefined) {
      this.commentAt.set(store.count, store.itemLength());
      writeComment(store, r.comment);
    }
    this.endLine(chain);
  }

  /** Begins a rule's line in its chain's block: its indent. */
  private beginLine(): PieceStore {
    this.rules.begin();
    this.rules.str(RULE_INDENT);
    return this.rules;
  }

  /** Ends a rule's line, a rule of chain number `chain`. */
  private endLine(chain: number): void {
    this.rules.byte(0x0a);
    this.rules.end();
    this.ruleChain.push(chain);
  }

  // Each template's rule in pieces, by address family, once it has been used.
  private readonly templates = new Map<AddressPortRule, EncodedPieces[]>();

  /**
   * The template's rule in pieces, to fill in; null for its first use, which is added as
   * any rule is, references and all. The others hold the same statements but for an
   * address and a port, so they need no checks of their own.
   */
  private templatePieces(chain: string, t: AddressPortRule, ip: IP, port: number): EncodedPieces | null {
    const pieces = this.templates.get(t)?.[ip.family];
    if (pieces) return pieces;
    this.rule({ chain, stmts: t.make(ip, port) });
    const known = this.templates.get(t) ?? [];
    known[ip.family] = encodedPieces(rulePieces(t, ip, port));
    this.templates.set(t, known);
    return null;
  }

  override templateRule(chain: string, t: AddressPortRule, ip: IP, port: number): void {
    const template = this.templatePieces(chain, t, ip, port);
    if (!template) return;
    const number = this.ruleChainNumber(chain);
    const store = this.beginLine();
    const { pieces } = template;
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (p === ADDRESS) store.ip(ip);
      else if (p === PORT) store.num(port);
      else store.utf8(p, template.ascii);
    }
    this.endLine(number);
  }

  finish(): TableText {
    if (this.purpose !== 'output') throw new InternalError('a table built for the diff is not printed out');
    const { ruleOrder } = groupByChain(this.madeOrder(), this.ruleChain);
    const { sets, elements } = printSets(this.sortedSets(), tableWords(this.table));
    return { table: this.table, sets, chains: this.rules.items(ruleOrder), chainCount: this.chainList.length, elements };
  }

  /**
   * The table as the diff reads it: its chains in the order made, each with its rules'
   * text and comment read back from the printed lines when asked for (strings that die young, where a Rule and a string per
   * rule would be copied by every collection until the end).
   */
  contents(): TableContents {
    const order = this.madeOrder();
    const { ruleOrder, first } = groupByChain(order, this.ruleChain);
    const lines = new PrintedLines(this.rules.items(ruleOrder), ruleOrder, this.commentAt);
    // Past each chain's opening lines, its first item, when they are printed.
    const past = this.purpose === 'output' ? 1 : 0;
    const chains = Array.from(order, (c, i) => printedChain(this.chainList[c], lines, first[i] + past, first[i + 1], RULE_INDENT.length));
    return { table: this.table, chains, sets: this.sortedSets() };
  }
}

/**
 * The sets' and their elements' lines, printed in order once the table is complete. (Into
 * a store of their own, as the rules are: the printer then only hands lines over.)
 */
function printSets(sets: SetContents[], words: string): { sets: PrintedItems; elements: PrintedItems } {
  const store = new PieceStore();
  const setLines: number[] = [];
  const elementLines: number[] = [];
  for (const s of sets) {
    store.begin();
    writeSetInBlock(store, s.set);
    store.byte(0x0a);
    setLines.push(store.end());
  }
  for (const s of sets) {
    for (const e of s.elements) {
      store.begin();
      writeElementLine(store, 'add', words, s.set, e);
      store.byte(0x0a);
      elementLines.push(store.end());
    }
  }
  return { sets: store.items(setLines), elements: store.items(elementLines) };
}

// The grouping of rules by chain runs once per table, before the engine has optimized it;
// each loop is a function of its own, which returns as the loop ends.

/**
 * Rule numbers grouped by chain, chains in the given order (chain numbers), each chain's
 * rules in the order added: the i-th chain's are ruleOrder[first[i]..first[i + 1]).
 */
function groupByChain(order: ArrayLike<number>, ruleChain: number[]): { ruleOrder: number[]; first: number[] } {
  const rank = ranks(order);
  const first = ruleCounts(rank, ruleChain);
  runningTotal(first);
  return { ruleOrder: placed(rank, ruleChain, first), first };
}

function ranks(order: ArrayLike<number>): number[] {
  const rank: number[] = new Array(order.length);
  for (let i = 0; i < order.length; i++) rank[order[i]] = i;
  return rank;
}

/** first[i + 1]: how many rules the chain of rank i has. */
function ruleCounts(rank: number[], ruleChain: number[]): number[] {
  const first: number[] = new Array(rank.length + 1).fill(0);
  for (let k = 0; k < ruleChain.length; k++) first[rank[ruleChain[k]] + 1]++;
  return first;
}

function runningTotal(a: number[]): void {
  for (let i = 1; i < a.length; i++) a[i] += a[i - 1];
}

function placed(rank: number[], ruleChain: number[], first: number[]): number[] {
  const next = first.slice(0, rank.length);
  const ruleOrder: number[] = new Array(ruleChain.length);
  for (let k = 0; k < ruleChain.length; k++) ruleOrder[next[rank[ruleChain[k]]]++] = k;
  return ruleOrder;
}

// Items are printed into a buffer of this size; each time it fills, what it holds is kept
// as a string (see PieceStore). An item longer than the buffer gets a larger one. Node
// makes a string of more than ~1 MB outside the heap: pieces stay below that.
const PIECE_BYTES = 1 << 19;

/**
 * Items printed one after another as UTF-8 into one buffer, used again and again: when it
 * fills, the items in it are kept as a string of one character per byte (latin1), a
 * large string the young-generation collector never copies. Kept as buffers, the ~45 MB
 * of lines at 10,000 Services (five times that at 50,000) would count as memory outside
 * the heap, to which V8 answers with full collections of the whole heap.
 */
export class PieceStore extends Utf8Out {
  private readonly pieces: string[] = [];
  private readonly ascii: boolean[] = [];
  // pieces.length, kept apart: the array's first string changes its kind of elements, and
  // code made fast for the empty array would be sent back to be compiled again.
  private pieceCount = 0;
  private itemStart = 0; // where the item being printed starts in buf
  // Per item, in the order added: its piece and where its bytes end there. Plain arrays:
  // typed ones would be memory outside the heap as well.
  private readonly itemPiece: number[] = [];
  private readonly itemEnd: number[] = [];
  private sealed = false;

  constructor(pieceBytes = PIECE_BYTES) {
    super();
    this.buf = Buffer.allocUnsafe(pieceBytes);
  }

  get count(): number {
    return this.itemEnd.length;
  }

  begin(): void {
    this.itemStart = this.at;
  }

  /** How many bytes of the item begun are printed. */
  itemLength(): number {
    return this.at - this.itemStart;
  }

  /** Ends the item begun; returns its number. */
  end(): number {
    this.itemPiece.push(this.pieceCount);
    this.itemEnd.push(this.at);
    return this.itemEnd.length - 1;
  }

  /** Keeps the items printed so far as a piece, and moves the item being printed to the start. */
  protected room(n: number): void {
    const sofar = this.at - this.itemStart;
    this.keepPiece(this.itemStart);
    this.carryNonAscii(this.itemStart);
    if (sofar + n > this.buf.length) {
      const larger = Buffer.allocUnsafe(Math.max(2 * this.buf.length, sofar + n));
      this.buf.copy(larger, 0, this.itemStart, this.at);
      this.buf = larger;
    } else this.buf.copyWithin(0, this.itemStart, this.at);
    this.itemStart = 0;
    this.at = sofar;
  }

  /** Keeps buf's first `end` bytes as a piece, noting whether they are ASCII. */
  private keepPiece(end: number): void {
    this.pieces.push(this.buf.toString('latin1', 0, end));
    this.pieceCount++;
    this.ascii.push(!(this.firstNonAscii >= 0 && this.firstNonAscii < end));
  }

  /** Where the item moved to buf's start from `from` has text above ASCII, if it has. */
  private carryNonAscii(from: number): void {
    if (this.lastNonAscii < from) {
      this.firstNonAscii = this.lastNonAscii = -1;
      return;
    }
    // Within the item: its first such text, or (when that is not known) the item's start.
    this.firstNonAscii = Math.max(0, this.firstNonAscii - from);
    this.lastNonAscii -= from;
  }

  /** The items in the given order (item numbers); nothing may be added after. */
  items(order: ArrayLike<number>): PrintedItems {
    if (!this.sealed) {
      this.keepPiece(this.at);
      this.sealed = true;
    }
    const count = order.length;
    const piece: number[] = new Array(count);
    const start: number[] = new Array(count);
    const end: number[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const k = order[i];
      const p = this.itemPiece[k];
      piece[i] = p;
      // Items follow one another in their piece; the first of a piece starts at 0.
      start[i] = k > 0 && this.itemPiece[k - 1] === p ? this.itemEnd[k - 1] : 0;
      end[i] = this.itemEnd[k];
    }
    return { pieces: this.pieces, ascii: this.ascii, piece, start, end };
  }
}
