// A table built only to be printed (compile's text output). Each rule is checked as in any
// table, then printed from its statements straight into large shared buffers as UTF-8,
// instead of being kept as a Rule object and a string: at 10,000 Services that is 250,000
// rules, and objects that live to the end are copied by every young-generation
// collection and read back from all over the heap when the chains are printed in name
// order. Printing as bytes makes no strings on the way either.
import type { IP } from '../net/ip.js';
import { formatIP } from '../net/ip.js';
import type { Chain, Rule, Table } from './objects.js';
import { BaseTableBuilder, type SetContents } from './ruleset.js';
import { writeRule, type TextOut } from './text.js';

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

export class TextTableBuilder extends BaseTableBuilder {
  private readonly store = new RuleStore();

  protected keepRule(chain: number, r: Rule): void {
    this.store.add(chain, r);
  }

  finish(): TableText {
    const order = this.chainOrder();
    const chains: Chain[] = new Array(order.length);
    for (let i = 0; i < order.length; i++) chains[i] = this.chainList[order[i]];
    return { table: this.table, chains, rules: this.store.grouped(order), sets: this.sortedSets() };
  }
}

// Rules are printed into pieces of this size; a longer rule gets a larger piece.
const PIECE_BYTES = 1 << 20;

/** Rules printed as UTF-8, each in one piece, with their chain's number. */
export class RuleStore implements TextOut {
  private readonly pieces: Buffer[] = [];
  private buf = Buffer.alloc(0); // the last piece
  private at = 0; // where the next byte goes in buf
  private ruleStart = 0; // where the rule being printed starts in buf
  // Per rule, in the order added: its chain's number, its piece and where its bytes end.
  private ruleChain = new Int32Array(1024);
  private rulePiece = new Int32Array(1024);
  private ruleEnd = new Int32Array(1024);
  private count = 0;

  add(chain: number, r: Rule): void {
    this.ruleStart = this.at;
    writeRule(this, r);
    if (this.count === this.ruleChain.length) this.growRules();
    const k = this.count++;
    this.ruleChain[k] = chain;
    this.rulePiece[k] = this.pieces.length - 1;
    this.ruleEnd[k] = this.at;
  }

  str(s: string): void {
    const n = s.length;
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (this.at + 3 * n > this.buf.length) this.room(3 * n);
    const b = this.buf;
    // Names (a numgen map has one per endpoint) go through the encoder; a loop is
    // quicker for the short words between them.
    if (n > 24) {
      this.at += b.write(s, this.at);
      return;
    }
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.at = at + b.write(s.slice(i), at);
        return;
      }
      b[at++] = c;
    }
    this.at = at;
  }

  num(n: number): void {
    if (!(n >= 0 && n <= 0x7fffffff && n === Math.floor(n))) {
      this.str(String(n));
      return;
    }
    if (this.at + 10 > this.buf.length) this.room(10);
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    let at = (this.at += digits);
    do {
      this.buf[--at] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
  }

  ip(ip: IP): void {
    if (ip.family !== 4) {
      this.str(formatIP(ip));
      return;
    }
    for (let i = 0; i < 4; i++) {
      if (i > 0) {
        if (this.at === this.buf.length) this.room(1);
        this.buf[this.at++] = 0x2e; // '.'
      }
      this.num(ip.bytes[i]);
    }
  }

  /** At least n free bytes: a new piece, with the rule printed so far moved to it. */
  private room(n: number): void {
    const sofar = this.at - this.ruleStart;
    const next = Buffer.allocUnsafe(Math.max(PIECE_BYTES, 2 * (sofar + n)));
    this.buf.copy(next, 0, this.ruleStart, this.at);
    this.pieces.push(next);
    this.buf = next;
    this.ruleStart = 0;
    this.at = sofar;
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

  /** The rules grouped by chain, chains in the given order, each chain's rules in the order added. */
  grouped(order: Int32Array): RuleBytes {
    const n = order.length;
    const count = this.count;
    const rank = new Int32Array(n);
    for (let i = 0; i < n; i++) rank[order[i]] = i;
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
    // Read back through plain views: subarrays of them are cheaper than a Buffer's.
    const pieces = this.pieces.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.length));
    return { pieces, piece, start, end, first };
  }
}
