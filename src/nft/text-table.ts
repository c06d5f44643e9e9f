// A table built only to be printed (compile's text output). Each chain and rule is checked
// as in any table, then printed from its values straight into large shared buffers as
// UTF-8, instead of being kept as objects and strings: at 10,000 Services there are
// 110,000 chains and 250,000 rules, and objects that live to the end are copied by every
// young-generation collection and read back from all over the heap when the chains are
// printed in name order. Printing as bytes makes no strings on the way either.
import type { Chain, Rule, Table } from './objects.js';
import { BaseTableBuilder, type SetContents } from './ruleset.js';
import { tableWords, writeChainAdd, writeRule } from './text.js';
import { Utf8Out } from './utf8-out.js';

/**
 * Printed items, each in one piece: item k is pieces[piece[k]] from start[k] to end[k].
 * A piece is UTF-8 bytes as a string of one character per byte (latin1).
 */
export interface PrintedItems {
  pieces: string[];
  piece: number[];
  start: number[];
  end: number[];
}

/** Rules in printing order; the rules of the i-th chain are first[i] to first[i + 1] - 1. */
export interface PrintedRules extends PrintedItems {
  first: number[];
}

export interface TableText {
  table: Table;
  chains: Chain[]; // sorted by name
  /** The "add chain" line of each of chains, without its line end. */
  chainLines: PrintedItems;
  rules: PrintedRules; // each without "add rule TABLE CHAIN " and line end
  sets: SetContents[]; // sorted by name
}

export class TextTableBuilder extends BaseTableBuilder {
  private readonly words = tableWords(this.table);
  private readonly chainLines = new PieceStore();
  private readonly rules = new PieceStore();
  // Per rule, in the order added: its chain's number.
  private readonly ruleChain: number[] = [];

  protected override chainAdded(c: Chain): void {
    this.chainLines.begin();
    writeChainAdd(this.chainLines, this.words, c);
    this.chainLines.end();
  }

  protected keepRule(chain: number, r: Rule): void {
    this.rules.begin();
    writeRule(this.rules, r);
    this.rules.end();
    this.ruleChain.push(chain);
  }

  finish(): TableText {
    const order = this.chainOrder();
    const n = order.length;
    const chains: Chain[] = new Array(n);
    for (let i = 0; i < n; i++) chains[i] = this.chainList[order[i]];
    return {
      table: this.table,
      chains,
      chainLines: this.chainLines.items(order),
      rules: this.groupedRules(order),
      sets: this.sortedSets(),
    };
  }

  /** The rules grouped by chain, chains in the given order, each chain's rules in the order added. */
  private groupedRules(order: ArrayLike<number>): PrintedRules {
    const n = order.length;
    const count = this.rules.count;
    const rank: number[] = new Array(n);
    for (let i = 0; i < n; i++) rank[order[i]] = i;
    const first: number[] = new Array(n + 1).fill(0);
    for (let k = 0; k < count; k++) first[rank[this.ruleChain[k]] + 1]++;
    for (let i = 0; i < n; i++) first[i + 1] += first[i];
    const next = first.slice(0, n);
    const ruleOrder: number[] = new Array(count);
    for (let k = 0; k < count; k++) ruleOrder[next[rank[this.ruleChain[k]]]++] = k;
    return { ...this.rules.items(ruleOrder), first };
  }
}

// Items are printed into a buffer of this size; each time it fills, what it holds is kept
// as a string (see PieceStore). An item longer than the buffer gets a larger one. Node
// makes a string of more than ~1 MB outside the heap: pieces stay below that.
const PIECE_BYTES = 1 << 19;

/**
 * Items printed one after another as UTF-8 into one buffer, used again and again: when it
 * fills, the items in it are kept as a string of one character per byte (latin1), a
 * large string the young-generation collector never copies. Kept as buffers, 35 MB at
 * 10,000 Services (175 MB at 50,000) would count as memory outside the heap, to which V8
 * answers with full collections of the whole heap.
 */
export class PieceStore extends Utf8Out {
  private readonly pieces: string[] = [];
  private itemStart = 0; // where the item being printed starts in buf
  // Per item, in the order added: its piece and where its bytes end there. Plain arrays:
  // typed ones would be memory outside the heap as well.
  private readonly itemPiece: number[] = [];
  private readonly itemEnd: number[] = [];
  private sealed = false;

  constructor() {
    super();
    this.buf = Buffer.allocUnsafe(PIECE_BYTES);
  }

  get count(): number {
    return this.itemEnd.length;
  }

  begin(): void {
    this.itemStart = this.at;
  }

  /** Ends the item begun; returns its number. */
  end(): number {
    this.itemPiece.push(this.pieces.length);
    this.itemEnd.push(this.at);
    return this.itemEnd.length - 1;
  }

  /** Keeps the items printed so far as a piece, and moves the item being printed to the start. */
  protected room(n: number): void {
    const sofar = this.at - this.itemStart;
    this.pieces.push(this.buf.toString('latin1', 0, this.itemStart));
    if (sofar + n > this.buf.length) {
      const larger = Buffer.allocUnsafe(Math.max(2 * this.buf.length, sofar + n));
      this.buf.copy(larger, 0, this.itemStart, this.at);
      this.buf = larger;
    } else this.buf.copyWithin(0, this.itemStart, this.at);
    this.itemStart = 0;
    this.at = sofar;
  }

  /** The items in the given order (item numbers); nothing may be added after. */
  items(order: ArrayLike<number>): PrintedItems {
    if (!this.sealed) {
      this.pieces.push(this.buf.toString('latin1', 0, this.at));
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
    return { pieces: this.pieces, piece, start, end };
  }
}
