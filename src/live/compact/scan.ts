// A listing held in one string, read item by item in the order nft printed them. Rules and
// plain chains, nearly all of a large listing, are read straight from their text
// (rules.ts); every other item, and any rule or chain not in exactly nft's spelling, is
// parsed with JSON.parse (runs of such items together) and read by LiveReader as before.
// Items are cut where nft starts a new one: `}, {"KIND": {"family": "` cannot stand inside
// a JSON string (its quotes would be escaped there), and a cut anywhere else would not parse.
//
// Returns false when the text is not plain `nft -j` output that can be cut this way; the
// caller then reads it with the checked reader (checked/reader.ts), which knows positions.
import type { ItemText } from '../checked/split.js';
import { isObj, readSet } from '../checked/json.js';
import type { Json } from '../../nft/expr-json.js';
import { readElements } from './elements.js';
import { ListingRuleReader } from './rules.js';
import type { NftSet } from '../../nft/objects.js';
import type { LiveReader } from '../checked/reader.js';

// A JSON string without escapes or control characters: its text is its value.
const PLAIN = '"([^"\\\\\\x00-\\x1f]*)"';
const INT = '(0|[1-9][0-9]{0,14})';
const PLAIN_CHAIN = new RegExp(`\\{"chain": \\{"family": "([a-z0-9]+)", "table": ${PLAIN}, "name": ${PLAIN}, "handle": ${INT}\\}\\}`, 'y');
// Where nft starts an item after another: the end of the last one, and a new kind whose
// body begins with its family.
const ITEM_START = /\}, \{"[a-z ]+": \{"family": "/g;
// Items parsed by JSON.parse are gathered up to about this many characters.
const BATCH_CHARS = 1 << 20;
// Larger runs of such items are left to the checked reader (parsing them at once holds them whole).
const MAX_ITEM_CHARS = 64 << 20;
const NOWHERE: ItemText = { text: '', line: 1, col: 1 };
const R = 0x72;
const C = 0x63;
const S = 0x73;
const M = 0x6d;
const ELEM = ', "elem": [';
// Where a set's "elem" is looked for: its head is short (a name, a comment, flags).
const MAX_SET_HEAD = 2048;
const COMMA = 0x2c;
const SPACE = 0x20;

class Scan {
  private pos: number;
  /** The items waiting for JSON.parse: from `waiting` (-1 when none) to `waitingEnd`. */
  private waiting = -1;
  private waitingEnd = -1;
  /** Set when waiting items are not JSON: the listing must be read by the checked reader. */
  private failed = false;
  private readonly rules: ListingRuleReader;

  constructor(
    private readonly text: string,
    private readonly reader: LiveReader,
    tableName: string,
    start: number,
    private readonly end: number,
  ) {
    this.pos = start;
    this.rules = new ListingRuleReader(tableName);
  }

  run(): boolean {
    const { text, end } = this;
    while (this.pos < end) {
      // `{"rule": ` or `{"chain": ` (each confirmed by what reads it). Characters are
      // compared one by one: startsWith at an offset costs several times as much.
      const kind = text.charCodeAt(this.pos + 2);
      const fastEnd = kind === R ? this.rule() : kind === C ? this.chain() : kind === S || kind === M ? this.setWithElements() : -1;
      if (this.failed) return false;
      if (fastEnd >= 0) this.pos = fastEnd;
      else this.wait();
      if (this.pos === end) break;
      if (text.charCodeAt(this.pos) !== COMMA || text.charCodeAt(this.pos + 1) !== SPACE) return false;
      this.pos += 2;
    }
    this.parseWaiting();
    return !this.failed;
  }

  /** A rule of our table read from its text: where it ends, or -1 (then it is read as JSON). */
  private rule(): number {
    const r = this.rules.item(this.text, this.pos);
    // The items before it are read first: its table and chain are among them.
    if (!r || !this.parseWaiting()) return -1;
    return this.reader.takeTextRule(r.family, r.chain, r.handle, r.comment, r.text) ? r.end : -1;
  }

  /** A chain without hook or anything else; handed over as the object JSON.parse would make. */
  private chain(): number {
    PLAIN_CHAIN.lastIndex = this.pos;
    const m = PLAIN_CHAIN.exec(this.text);
    if (!m || !this.parseWaiting()) return -1;
    if (!this.reader.takePlainChain(m[1], m[2], m[3])) {
      this.reader.addParsed({ chain: { family: m[1], table: m[2], name: m[3], handle: Number(m[4]) } }, NOWHERE);
    }
    return PLAIN_CHAIN.lastIndex;
  }

  /**
   * A set or map of ours with elements, its elements read straight from their text
   * (compact/elements.ts) and the rest handed over as JSON.parse gives it; -1 when it is
   * not such a set, or its elements are not read so (then it is read as JSON whole).
   */
  private setWithElements(): number {
    const { text, pos } = this;
    // nft lists the elements last, after a short head.
    const elem = text.slice(pos, pos + MAX_SET_HEAD).indexOf(ELEM);
    if (elem < 0) return -1;
    const itemEnd = this.itemEnd();
    const elemStart = pos + elem + ELEM.length;
    if (elemStart > itemEnd || text.slice(itemEnd - 3, itemEnd) !== ']}}') return -1;
    let head: { [kind: string]: { [k: string]: Json } };
    try {
      head = JSON.parse(`${text.slice(pos, pos + elem)}}}`) as typeof head;
    } catch {
      return -1;
    }
    const kind = Object.keys(head)[0];
    const body = head[kind];
    if ((kind !== 'set' && kind !== 'map') || !isObj(body) || typeof body.family !== 'string' || typeof body.table !== 'string') return -1;
    let set: NftSet;
    try {
      set = readSet(kind, body);
    } catch {
      return -1; // read as JSON, which reports it
    }
    // Read as JSON: the members of a set with timeouts are not read, or (a managed set,
    // LiveFilter) carry their timeouts.
    if (set.flags?.includes('timeout')) return -1;
    const lines = readElements(text, elemStart, itemEnd - 3, set);
    if (!lines || !this.parseWaiting()) return -1;
    this.reader.addParsed(head, NOWHERE);
    this.reader.takeElementLines(body.family, body.table, set.name, lines);
    return itemEnd;
  }

  /** Where the item at pos ends: where the next item starts, or at the end. */
  private itemEnd(): number {
    ITEM_START.lastIndex = this.pos;
    const next = ITEM_START.exec(this.text);
    return next && next.index < this.end ? next.index + 1 : this.end;
  }

  /**
   * The item at pos, left for JSON.parse: up to where the next item starts. Text that is
   * not spaced as nft spaces it has no such places, and is one item to the end: parsed
   * whole when that is not too large, else read by the checked reader, which streams it.
   */
  private wait(): void {
    if (this.waiting < 0) this.waiting = this.pos;
    this.pos = this.waitingEnd = this.itemEnd();
    if (this.waitingEnd - this.waiting > MAX_ITEM_CHARS) this.failed = true;
    else if (this.waitingEnd - this.waiting >= BATCH_CHARS) this.parseWaiting();
  }

  /** The waiting items parsed and read; false (and failed) when they are not JSON. */
  private parseWaiting(): boolean {
    if (this.waiting < 0) return true;
    let items: unknown[];
    try {
      items = JSON.parse(`[${this.text.slice(this.waiting, this.waitingEnd)}]`) as unknown[];
    } catch {
      this.failed = true;
      return false;
    }
    this.waiting = -1;
    for (const v of items) this.reader.addParsed(v, NOWHERE);
    return true;
  }
}

/** The `{"nftables": [` before the items and the `]}` after them; null when not that shape. */
export function itemsRange(text: string): { start: number; end: number } | null {
  const open = /^\s*\{\s*"nftables"\s*:\s*\[\s*/.exec(text.slice(0, 200));
  const close = /\s*\]\s*\}\s*$/.exec(text.slice(Math.max(0, text.length - 200)));
  if (!open || !close) return null;
  const start = open[0].length;
  const end = text.length - close[0].length;
  return start <= end ? { start, end } : null;
}

/** Reads the listing into the reader (of our table `tableName`); false when it must be read by the checked reader instead. */
export function scanListing(text: string, reader: LiveReader, tableName: string): boolean {
  const range = itemsRange(text);
  return range !== null && new Scan(text, reader, tableName, range.start, range.end).run();
}
