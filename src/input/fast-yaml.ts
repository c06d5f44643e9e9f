// A fast reader for the YAML that Kubernetes tools print: block mappings and sequences,
// single-line plain and quoted scalars, literal block scalars and single-line flow
// collections. It reads one document at a time and gives the same value as the `yaml`
// package's parse + toJS (core schema) would, or gives up: anything outside that subset
// (anchors, tags, comments after values, multi-line plain or quoted scalars, folded
// scalars, tabs, ...) throws NotFast, and the caller reads that document with the `yaml`
// package instead. Giving up is always safe; guessing never is, so every check below
// errs on the side of giving up.

import { FlowReader } from './fast-yaml-flow.js';
import {
  COLON,
  DASH,
  DQUOTE,
  FAST_MAX_DEPTH,
  HASH,
  MAX_KEY_LENGTH,
  NotFast,
  SPACE,
  SQUOTE,
  decodeDoubleQuoted,
  hasPlainIndicator,
  isKeyChar,
  isKeyStart,
  isPlainStart,
  knownKeyAt,
  plainKey,
  resolvePlainAt,
  setKey,
} from './fast-yaml-scalars.js';

export { FAST_MAX_DEPTH, NotFast, resolvePlain, resolvePlainAt } from './fast-yaml-scalars.js';

/**
 * One document, from `start` (a line start) to `end` (the start of the next document's
 * marker line, or the end of the text). The document must not hold tabs, carriage returns
 * or other characters the caller screens out (see fast-parse.ts).
 */
export class BlockReader {
  // The current line: [ls, le) with its content starting at cs, in column col. After a
  // "- " the rest of the line is read as a line of its own, starting further right.
  private ls = 0;
  private le = 0;
  private cs = 0;
  private col = 0;
  private eof = false;
  private depth = 0;
  // The known key entryColon last found, and where (-1: none).
  private knownKey = '';
  private knownKeyStart = -1;
  /**
   * For a kubectl List (a root mapping with an `items` block sequence): the line start of
   * each item, then the offset where the last one ends.
   */
  listItems: number[] | null = null;
  /** Whether some mapping holds a null value (which the caller may want to drop). */
  nullField = false;

  constructor(
    private readonly s: string,
    private readonly start: number,
    private readonly end: number,
  ) {}

  /** The document's value (null when it has no content). */
  read(): unknown {
    const { s } = this;
    this.le = this.start - 1;
    this.advance();
    if (!this.eof && s.startsWith('---', this.cs) && this.col === 0) {
      const after = this.cs + 3;
      if (after < this.le && this.blankFrom(after) !== this.le) throw new NotFast('content on the --- line');
      this.advance();
    }
    if (this.eof) return null;
    const c = s.charCodeAt(this.cs);
    let value: unknown;
    if (this.isDashItem(this.cs)) value = this.blockSeq(this.col);
    else if (this.entryColon(this.cs) !== -1) value = this.blockMap(this.col, true);
    else throw new NotFast(c === 0x7b || c === 0x5b ? 'flow document' : 'scalar document');
    if (!this.eof) throw new NotFast('content after the root node');
    return value;
  }

  /** Moves to the next line with content, skipping blank and comment-only lines. */
  private advance(): void {
    const { s, end } = this;
    for (;;) {
      const ls = this.le + 1;
      if (ls >= end) {
        this.eof = true;
        this.ls = this.le = this.cs = end;
        this.col = -1;
        return;
      }
      let le = s.indexOf('\n', ls);
      if (le === -1 || le > end) le = end;
      let i = ls;
      while (i < le && s.charCodeAt(i) === SPACE) i++;
      this.ls = ls;
      this.le = le;
      if (i === le || s.charCodeAt(i) === HASH) continue;
      this.cs = i;
      this.col = i - ls;
      return;
    }
  }

  private blankFrom(i: number): number {
    while (i < this.le && this.s.charCodeAt(i) === SPACE) i++;
    return i;
  }

  private isDashItem(p: number): boolean {
    return this.s.charCodeAt(p) === DASH && (p + 1 === this.le || this.s.charCodeAt(p + 1) === SPACE);
  }

  private enter(): void {
    if (++this.depth > FAST_MAX_DEPTH) throw new NotFast('nested too deep');
  }

  /**
   * When the text at p is a mapping key followed by ": " (or ":" at the line end), the
   * offset of that colon; else -1.
   */
  private entryColon(p: number): number {
    const { s, le } = this;
    const known = knownKeyAt(s, p, le);
    if (known !== null) {
      this.knownKey = known;
      this.knownKeyStart = p;
      return p + known.length;
    }
    const c = s.charCodeAt(p);
    let i: number;
    if (isKeyStart(c)) {
      i = p + 1;
      while (i < le && isKeyChar(s.charCodeAt(i))) i++;
    } else if (c === DQUOTE || c === SQUOTE) {
      i = this.quoteEnd(p) + 1;
    } else return -1;
    if (s.charCodeAt(i) !== COLON) return -1;
    return i + 1 === le || s.charCodeAt(i + 1) === SPACE ? i : -1;
  }

  /** The offset of the quote that closes the quoted scalar at p, on the same line. */
  private quoteEnd(p: number): number {
    const { s, le } = this;
    const q = s.charCodeAt(p);
    for (let i = p + 1; i < le; i++) {
      const c = s.charCodeAt(i);
      if (q === DQUOTE && c === 0x5c) i++;
      else if (c === q) {
        if (q === SQUOTE && s.charCodeAt(i + 1) === SQUOTE) i++;
        else return i;
      }
    }
    throw new NotFast('quoted scalar over several lines');
  }

  private quoted(p: number, q: number): string {
    const body = this.s.slice(p + 1, q);
    return this.s.charCodeAt(p) === DQUOTE ? decodeDoubleQuoted(body) : body.replaceAll("''", "'");
  }

  private key(p: number, colon: number): string {
    if (this.knownKeyStart === p) return this.knownKey;
    if (colon - p > MAX_KEY_LENGTH) throw new NotFast('long key');
    const c = this.s.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) return this.quoted(p, colon - 1);
    return plainKey(this.s, p, colon);
  }

  /** A block mapping whose keys stand in column `indent`; the current line is its first entry. */
  private blockMap(indent: number, root = false): Record<string, unknown> {
    this.enter();
    const obj: Record<string, unknown> = {};
    for (;;) {
      const p = this.cs;
      const colon = this.entryColon(p);
      if (colon === -1) throw new NotFast('line in a mapping that is not a "key: value" entry');
      const key = this.key(p, colon);
      const v = this.blankFrom(colon + 1);
      let value: unknown;
      if (v === this.le) {
        this.advance();
        if (this.eof || this.col < indent) value = null;
        else if (this.col === indent) value = this.isDashItem(this.cs) ? this.blockSeq(indent, root && key === 'items') : null;
        else value = this.blockNode(root && key === 'items');
      } else value = this.inline(v, indent);
      if (value === null) this.nullField = true;
      setKey(obj, key, value);
      if (this.eof || this.col < indent) break;
      if (this.col > indent) throw new NotFast('more indented line after a mapping value');
    }
    this.depth--;
    return obj;
  }

  /** A block sequence whose dashes stand in column `indent`. */
  private blockSeq(indent: number, recordItems = false): unknown[] {
    this.enter();
    const arr: unknown[] = [];
    if (recordItems) this.listItems = [];
    while (!this.eof && this.col === indent && this.isDashItem(this.cs)) {
      if (recordItems) this.listItems!.push(this.ls);
      const v = this.blankFrom(this.cs + 1);
      let item: unknown;
      if (v === this.le) {
        this.advance();
        item = !this.eof && this.col > indent ? this.blockNode() : null;
      } else {
        // The rest of the line is a node of its own, in the column where it starts.
        this.cs = v;
        this.col = v - this.ls;
        if (this.isDashItem(v)) item = this.blockSeq(this.col);
        else if (this.entryColon(v) !== -1) item = this.blockMap(this.col);
        else item = this.inline(v, indent);
      }
      arr.push(item);
      if (!this.eof && this.col > indent) throw new NotFast('more indented line after a sequence item');
    }
    // Where the last item ends: the next line with content (or the document's end).
    if (recordItems) this.listItems!.push(this.eof ? this.end : this.ls);
    this.depth--;
    return arr;
  }

  /** A collection that starts on its own line, more indented than its parent. */
  private blockNode(recordItems = false): unknown {
    if (this.isDashItem(this.cs)) return this.blockSeq(this.col, recordItems);
    if (this.entryColon(this.cs) !== -1) return this.blockMap(this.col);
    throw new NotFast('scalar on a line of its own');
  }

  /** A value that starts at p, after "key: " or "- "; leaves the reader on the next line. */
  private inline(p: number, parentIndent: number): unknown {
    const { s, le } = this;
    const c = s.charCodeAt(p);
    let value: unknown;
    let after: number;
    if (c === DQUOTE || c === SQUOTE) {
      const q = this.quoteEnd(p);
      value = this.quoted(p, q);
      after = q + 1;
    } else if (c === 0x5b || c === 0x7b) {
      const flow = new FlowReader(s, p, le, this.depth);
      value = flow.node();
      after = flow.pos;
      if (flow.nullField) this.nullField = true;
    } else if (c === 0x7c) {
      return this.literal(p, parentIndent);
    } else if (!isPlainStart(c) || (c === DASH && (p + 1 === le || s.charCodeAt(p + 1) === SPACE))) {
      throw new NotFast(`value starting with ${JSON.stringify(s[p])}`);
    } else {
      let e = le;
      while (s.charCodeAt(e - 1) === SPACE) e--;
      if (hasPlainIndicator(s, p, e)) throw new NotFast('comment or mapping indicator in a plain scalar');
      value = resolvePlainAt(s, p, e);
      after = e;
    }
    if (this.blankFrom(after) !== le) throw new NotFast('text after a value');
    this.advance();
    return value;
  }

  /** A literal block scalar (`|` or `|-`): its lines as they are, less their indentation. */
  private literal(p: number, parentIndent: number): string {
    const { s, end } = this;
    const strip = s.charCodeAt(p + 1) === DASH;
    const headerEnd = p + (strip ? 2 : 1);
    if (this.blankFrom(headerEnd) !== this.le) throw new NotFast('block scalar header');
    const lines: string[] = [];
    let indent = -1;
    let maxLeadingBlank = 0;
    let trailingBlank = 0;
    let ls = this.le + 1;
    for (; ls < end; ) {
      let le = s.indexOf('\n', ls);
      if (le === -1 || le > end) throw new NotFast('block scalar at the end of the text');
      let i = ls;
      while (i < le && s.charCodeAt(i) === SPACE) i++;
      const spaces = i - ls;
      if (i === le && (indent === -1 || spaces <= indent)) {
        // An empty line: part of the scalar only if content follows, or by chomping.
        if (indent === -1) maxLeadingBlank = Math.max(maxLeadingBlank, spaces);
        lines.push('');
        trailingBlank++;
        ls = le + 1;
        continue;
      }
      if (indent === -1) {
        if (spaces <= parentIndent) break;
        if (maxLeadingBlank > spaces) throw new NotFast('leading blank line more indented than the scalar');
        indent = spaces;
      } else if (spaces < indent) break;
      lines.push(s.slice(ls + indent, le));
      trailingBlank = 0;
      ls = le + 1;
    }
    if (indent === -1) throw new NotFast('empty block scalar');
    const content = lines.slice(0, lines.length - trailingBlank).join('\n');
    // Leave the reader on the line that ended the scalar.
    this.le = ls - 1;
    this.advance();
    return strip ? content : content + '\n';
  }
}
