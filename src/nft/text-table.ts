// The stores of a table kept as printed text (TableBuilder's RuleStore): TextStore for
// compile's text output, PrintedStore for the diff's wanted tables (read back by
// printed-chains.ts). Each rule is checked as in any table, then printed as its
// line in its chain's block (nested-text.ts), from its statements straight into a shared
// buffer as UTF-8, instead of being kept as a Rule object and a string: at 10,000
// Services there are 250,000 rules, and objects that live to the end are copied by every
// young-generation collection. Printing as bytes makes no strings on the way either, and
// a chain's opening lines and the rules added right after them are printed out as one
// piece.
import type { Chain, NewRule, Table } from './objects.js';
import type { BuiltTable, RuleStore, SetContents, TableContents } from './ruleset.js';
import { PrintedLines, printedChain } from './printed-chains.js';
import { tableWords, writeComment, writeElementBlock, writeElementLine, writeRangeBlock, writeRuleBody } from './text.js';
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

/**
 * Rules kept as their printed lines (a RuleStore): each checked rule printed into a shared
 * store of UTF-8 bytes, and a template's rules made from its first use's pieces. TextStore
 * prints the table out; PrintedStore keeps it for the diff to read back.
 */
abstract class LineStore {
  // The chains' opening lines (TextStore) and their rules' lines, in the order printed.
  protected readonly lines = new PieceStore();
  // Per item of the store, in the order added: its chain's number.
  protected readonly ruleChain: number[] = [];
  // Item number to where its comment starts in its line (few rules have one).
  protected readonly commentAt = new Map<number, number>();
  // Each template's rule in pieces, by address family, once it has been used.
  private readonly templates = new Map<AddressPortRule, EncodedPieces[]>();

  keepRule(chain: number, r: NewRule): void {
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
    this.lines.begin();
    this.lines.str(RULE_INDENT);
    return this.lines;
  }

  /** Ends a rule's line, a rule of chain number `chain`. */
  private endLine(chain: number): void {
    this.lines.byte(0x0a);
    this.lines.end();
    this.ruleChain.push(chain);
  }

  templateRule(chain: number, t: AddressPortRule, ip: IP, port: number): boolean {
    const template = this.templates.get(t)?.[ip.family];
    if (!template) return false;
    const store = this.beginLine();
    const { pieces } = template;
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (p === ADDRESS) store.ip(ip);
      else if (p === PORT) store.num(port);
      else store.utf8(p, template.ascii);
    }
    this.endLine(chain);
    return true;
  }

  /** The template's first use, added as any rule: its pieces, for the others (checked to print their values as values). */
  templateAdded(t: AddressPortRule, ip: IP, port: number): void {
    const known = this.templates.get(t) ?? [];
    known[ip.family] = encodedPieces(rulePieces(t, ip, port));
    this.templates.set(t, known);
  }
}

/** The table only to be printed out: each chain's opening lines printed as it is made, then its rules. */
export class TextStore extends LineStore implements RuleStore<TableText> {
  /**
   * A chain's opening lines, printed as it is made: the first item of its chain, so that
   * the rules a chain gets at once follow it in the store and the blocks of chains printed
   * in the order made are copied out in long runs. Each opening but the first closes the
   * block of the chain made before, which in that order is the one before it.
   */
  chainAdded(c: Chain, n: number): void {
    const store = this.lines;
    store.begin();
    if (n > 0) store.str(CHAIN_BLOCK_CLOSE);
    writeChainBlockOpen(store, c);
    store.end();
    this.ruleChain.push(n);
  }

  /** Whether each set's elements are printed as one command (ElementBlockTextStore). */
  protected readonly elementBlocks: boolean = false;

  finish(t: BuiltTable): TableText {
    const { ruleOrder } = groupByChain(t.chains.length, this.ruleChain);
    const { sets, elements } = printSets(t.sets, tableWords(t.table), this.elementBlocks);
    return { table: t.table, sets, chains: this.lines.items(ruleOrder), chainCount: t.chains.length, elements };
  }
}

/** A TextStore that prints each set's elements as one `add element` command (text.ts, writeElementBlock). */
export class ElementBlockTextStore extends TextStore {
  protected override readonly elementBlocks: boolean = true;
}

/**
 * The table as the diff reads it: its chains in the order made, each with its rules' text
 * and comment read back from the printed lines when asked for (strings that die young,
 * where a Rule and a string per rule would be copied by every collection until the end).
 * No chain's opening lines are printed.
 */
export class PrintedStore extends LineStore implements RuleStore<TableContents> {
  chainAdded(): void {}

  finish(t: BuiltTable): TableContents {
    const { ruleOrder, first } = groupByChain(t.chains.length, this.ruleChain);
    const lines = new PrintedLines(this.lines.items(ruleOrder), ruleOrder, this.commentAt);
    const chains = t.chains.map((c, i) => printedChain(c, lines, first[i], first[i + 1], RULE_INDENT.length));
    return { table: t.table, chains, sets: t.sets };
  }
}

/**
 * The sets' and their elements' lines, printed in order once the table is complete. (Into
 * a store of their own, as the rules are: the printer then only hands lines over.)
 */
function printSets(sets: SetContents[], words: string, blocks: boolean): { sets: PrintedItems; elements: PrintedItems } {
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
    if (blocks) {
      if (!s.keyRanges && s.elements.length === 0) continue;
      store.begin();
      if (s.keyRanges) writeRangeBlock(store, words, s.set, s.keyRanges);
      else writeElementBlock(store, words, s.set, s.elements);
      store.byte(0x0a);
      elementLines.push(store.end());
      continue;
    }
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
 * Item numbers grouped by chain, chains in the order made, each chain's items in the order
 * added: the i-th chain's are ruleOrder[first[i]..first[i + 1]).
 */
function groupByChain(chainCount: number, ruleChain: number[]): { ruleOrder: number[]; first: number[] } {
  const first = ruleCounts(chainCount, ruleChain);
  runningTotal(first);
  return { ruleOrder: placed(chainCount, ruleChain, first), first };
}

/** first[i + 1]: how many items chain i has. */
function ruleCounts(chainCount: number, ruleChain: number[]): number[] {
  const first: number[] = new Array(chainCount + 1).fill(0);
  for (let k = 0; k < ruleChain.length; k++) first[ruleChain[k] + 1]++;
  return first;
}

function runningTotal(a: number[]): void {
  for (let i = 1; i < a.length; i++) a[i] += a[i - 1];
}

function placed(chainCount: number, ruleChain: number[], first: number[]): number[] {
  const next = first.slice(0, chainCount);
  const ruleOrder: number[] = new Array(ruleChain.length);
  for (let k = 0; k < ruleChain.length; k++) ruleOrder[next[ruleChain[k]]++] = k;
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
