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

/** Printed items, each in one piece: item k is pieces[piece[k]] from start[k] to end[k]. */
export interface PrintedItems {
  pieces: Uint8Array[];
  piece: Int32Array;
  start: Int32Array;
  end: Int32Array;
}

/** Rules in printing order; the rules of the i-th chain are first[i] to first[i + 1] - 1. */
export interface PrintedRules extends PrintedItems {
  first: Int32Array;
}

export interface TableText {
  table: Table;
  chains: Chain[]; // sorted by name
  /** The "add chain" line of each of chains, with its line end; the chain's name starts at nameAt. */
  chainLines: PrintedItems;
  nameAt: number;
  rules: PrintedRules; // each without "add rule TABLE CHAIN " and line end
  sets: SetContents[]; // sorted by name
}

export class TextTableBuilder extends BaseTableBuilder {
  private readonly words = tableWords(this.table);
  private readonly chainLines = new PieceStore();
  private readonly rules = new PieceStore();
  // Per rule, in the order added: its chain's number.
  private ruleChain = new Int32Array(1024);

  protected override chainAdded(c: Chain): void {
    this.chainLines.begin();
    writeChainAdd(this.chainLines, this.words, c);
    this.chainLines.byte(0x0a);
    this.chainLines.end();
  }

  protected keepRule(chain: number, r: Rule): void {
    this.rules.begin();
    writeRule(this.rules, r);
    const k = this.rules.end();
    if (k === this.ruleChain.length) {
      const grown = new Int32Array(2 * k);
      grown.set(this.ruleChain);
      this.ruleChain = grown;
    }
    this.ruleChain[k] = chain;
  }

  finish(): TableText {
    const order = this.chainOrder();
    const n = order.length;
    const chains: Chain[] = new Array(n);
    for (let i = 0; i < n; i++) chains[i] = this.chainList[order[i]];
    // "add chain ip kube-proxy ": chain names are ASCII (objects.ts checks them), the
    // words may not be.
    const nameAt = Buffer.byteLength(`add chain ${this.words} `);
    return {
      table: this.table,
      chains,
      chainLines: this.chainLines.items(order),
      nameAt,
      rules: this.groupedRules(order),
      sets: this.sortedSets(),
    };
  }

  /** The rules grouped by chain, chains in the given order, each chain's rules in the order added. */
  private groupedRules(order: Int32Array): PrintedRules {
    const n = order.length;
    const count = this.rules.count;
    const rank = new Int32Array(n);
    for (let i = 0; i < n; i++) rank[order[i]] = i;
    const first = new Int32Array(n + 1);
    for (let k = 0; k < count; k++) first[rank[this.ruleChain[k]] + 1]++;
    for (let i = 0; i < n; i++) first[i + 1] += first[i];
    const next = first.slice(0, n);
    const ruleOrder = new Int32Array(count);
    for (let k = 0; k < count; k++) ruleOrder[next[rank[this.ruleChain[k]]]++] = k;
    return { ...this.rules.items(ruleOrder), first };
  }
}

// Items are printed into pieces of this size; a longer item gets a larger piece.
const PIECE_BYTES = 1 << 20;

/** Items printed one after another, each kept whole in one piece. */
export class PieceStore extends Utf8Out {
  private readonly pieces: Buffer[] = [];
  private itemStart = 0; // where the item being printed starts in buf
  // Per item, in the order added: its piece and where its bytes end.
  private itemPiece = new Int32Array(1024);
  private itemEnd = new Int32Array(1024);
  count = 0;

  begin(): void {
    this.itemStart = this.at;
  }

  /** Ends the item begun; returns its number. */
  end(): number {
    if (this.count === this.itemPiece.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(2 * a.length);
        b.set(a);
        return b;
      };
      this.itemPiece = grow(this.itemPiece);
      this.itemEnd = grow(this.itemEnd);
    }
    this.itemPiece[this.count] = this.pieces.length - 1;
    this.itemEnd[this.count] = this.at;
    return this.count++;
  }

  /** A new piece, with the item printed so far moved to it. */
  protected room(n: number): void {
    const sofar = this.at - this.itemStart;
    const next = Buffer.allocUnsafe(Math.max(PIECE_BYTES, 2 * (sofar + n)));
    this.buf.copy(next, 0, this.itemStart, this.at);
    this.pieces.push(next);
    this.buf = next;
    this.itemStart = 0;
    this.at = sofar;
  }

  /** The items in the given order (item numbers). */
  items(order: Int32Array): PrintedItems {
    const count = order.length;
    const piece = new Int32Array(count);
    const start = new Int32Array(count);
    const end = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const k = order[i];
      const p = this.itemPiece[k];
      piece[i] = p;
      // Items follow one another in their piece; the first of a piece starts at 0.
      start[i] = k > 0 && this.itemPiece[k - 1] === p ? this.itemEnd[k - 1] : 0;
      end[i] = this.itemEnd[k];
    }
    // Read back through plain views: subarrays of them are cheaper than a Buffer's.
    const pieces = this.pieces.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.length));
    return { pieces, piece, start, end };
  }
}
