// A table built only to be printed (compile's text output). Each rule is checked as in any
// table, then kept as its nft text, UTF-8 encoded into large shared buffers, instead of as
// a Rule object and a string: at 10,000 Services that is 250,000 rules, and objects that
// live to the end are copied by every young-generation collection and are read back from
// all over the heap when the chains are printed in name order.
import type { Chain, Rule, Table } from './objects.js';
import { BaseTableBuilder, type SetContents } from './ruleset.js';
import { ruleText } from './text.js';

/** Every rule's text as UTF-8 bytes, in printing order: rule k is pieces[piece[k]] from start[k] to end[k]. */
export interface RuleBytes {
  pieces: Uint8Array[];
  piece: Int32Array;
  start: Int32Array;
  end: Int32Array;
  /** The rules of the i-th chain are first[i] to first[i + 1] - 1. */
  first: Int32Array;
}

export interface TableText {
  table: Table;
  chains: Chain[]; // sorted by name
  rules: RuleBytes;
  sets: SetContents[]; // sorted by name
}

// Rule texts are written into pieces of this size; a longer text gets a piece of its own.
const PIECE_BYTES = 1 << 20;

export class TextTableBuilder extends BaseTableBuilder {
  private readonly pieces: Uint8Array[] = [];
  private current = Buffer.alloc(0);
  private used = 0;
  // Per rule, in the order added: its chain's number, its piece and where its bytes end.
  private ruleChain = new Int32Array(1024);
  private rulePiece = new Int32Array(1024);
  private ruleEnd = new Int32Array(1024);
  private ruleCount = 0;

  protected keepRule(chain: number, r: Rule): void {
    const text = ruleText(r);
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (this.pieces.length === 0 || 3 * text.length > this.current.length - this.used) this.newPiece(3 * text.length);
    if (this.ruleCount === this.ruleChain.length) this.growRules();
    this.used += this.current.write(text, this.used);
    const k = this.ruleCount++;
    this.ruleChain[k] = chain;
    this.rulePiece[k] = this.pieces.length - 1;
    this.ruleEnd[k] = this.used;
  }

  private newPiece(atLeast: number): void {
    this.current = Buffer.allocUnsafe(Math.max(PIECE_BYTES, atLeast));
    this.used = 0;
    // Read back through a plain view: subarrays of it are cheaper than a Buffer's.
    this.pieces.push(new Uint8Array(this.current.buffer, this.current.byteOffset, this.current.length));
  }

  private growRules(): void {
    const grow = (a: Int32Array) => {
      const b = new Int32Array(2 * a.length);
      b.set(a);
      return b;
    };
    this.ruleChain = grow(this.ruleChain);
    this.rulePiece = grow(this.rulePiece);
    this.ruleEnd = grow(this.ruleEnd);
  }

  finish(): TableText {
    const order = this.chainOrder();
    const n = order.length;
    const count = this.ruleCount;
    const rank = new Int32Array(n);
    for (let i = 0; i < n; i++) rank[order[i]] = i;
    // Rules grouped by their chain's place in the order, each chain's in the order added.
    const first = new Int32Array(n + 1);
    for (let k = 0; k < count; k++) first[rank[this.ruleChain[k]] + 1]++;
    for (let i = 0; i < n; i++) first[i + 1] += first[i];
    const next = first.slice(0, n);
    const piece = new Int32Array(count);
    const start = new Int32Array(count);
    const end = new Int32Array(count);
    for (let k = 0; k < count; k++) {
      const at = next[rank[this.ruleChain[k]]]++;
      const p = this.rulePiece[k];
      piece[at] = p;
      start[at] = k > 0 && this.rulePiece[k - 1] === p ? this.ruleEnd[k - 1] : 0;
      end[at] = this.ruleEnd[k];
    }
    const chains: Chain[] = new Array(n);
    for (let i = 0; i < n; i++) chains[i] = this.chainList[order[i]];
    return { table: this.table, chains, rules: { pieces: this.pieces, piece, start, end, first }, sets: this.sortedSets() };
  }
}
