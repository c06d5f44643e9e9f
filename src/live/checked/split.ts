// `{"nftables": [ITEM, ITEM, ...]}` split into its items without parsing the whole
// document: the listing of a large cluster is hundreds of megabytes, more than one
// JavaScript string may hold, and parsing it whole would hold the text and the whole tree
// at once. Chunks go in, item texts come out with the position where each starts; each
// item is then small enough to JSON.parse on its own.

export interface ItemText {
  text: string;
  line: number; // 1-based
  col: number; // 1-based
}

/** The outer document is not what `nft -j list` prints. */
export class OuterShapeError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly col: number,
  ) {
    super(message);
    this.name = 'OuterShapeError';
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACK = 0x5b;
const RBRACK = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

// The outer document, one token at a time: `{` `"nftables"` `:` `[` items `]` `}`.
type Expect = 'open' | 'key' | 'colon' | 'array' | 'item-or-end' | 'item' | 'comma-or-end' | 'close' | 'eof';

const WANTED: Record<Expect, string> = {
  open: "'{'",
  key: '"nftables"',
  colon: "':'",
  array: "'['",
  'item-or-end': "an object or ']'",
  item: 'an object',
  'comma-or-end': "',' or ']'",
  close: "'}'",
  eof: 'the end of the input',
};

export function* splitItems(chunks: Iterable<string>): Generator<ItemText> {
  const s = new Splitter();
  for (const chunk of chunks) {
    s.itemStart = s.depth > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (s.depth > 0) {
        if (s.inItem(c) && s.depth === 0) yield s.item(chunk, i);
      } else if (s.expect === 'key' && s.keyText !== '') s.keyChar(chunk[i], c);
      else s.outside(c, i);
    }
    if (s.depth > 0 && s.itemStart !== -1) s.pieces.push(chunk.slice(s.itemStart));
  }
  if (s.expect !== 'eof') {
    throw new OuterShapeError(`the input ends early: expected ${s.depth > 0 ? 'the end of an object' : WANTED[s.expect]}`, s.line, s.col);
  }
}

/** The splitter's state between characters and chunks. */
class Splitter {
  expect: Expect = 'open';
  line = 1;
  col = 1;
  // Inside an item: its pieces so far, where it starts in this chunk (-1: not in it), its
  // nesting depth and string state, and where it starts in the input.
  pieces: string[] = [];
  itemStart = -1;
  depth = 0;
  private inString = false;
  private escaped = false;
  private itemLine = 0;
  private itemCol = 0;
  /** The outer key read so far, from its opening quote. */
  keyText = '';

  private fail(what: string): never {
    throw new OuterShapeError(`expected ${WANTED[this.expect]}${what}`, this.line, this.col);
  }

  /**
   * A character inside an item: only nesting and strings matter (JSON strings hold no
   * newline). True when it closes a bracket. (A plain loop: skipping ahead with regular
   * expressions measured no faster.)
   */
  inItem(c: number): boolean {
    let closed = false;
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) this.inString = false;
    } else if (c === QUOTE) this.inString = true;
    else if (c === LBRACE || c === LBRACK) this.depth++;
    else if (c === RBRACE || c === RBRACK) {
      this.depth--;
      closed = true;
    } else if (c === 0x0a) {
      this.line++;
      this.col = 0;
    }
    this.col++;
    return closed;
  }

  /** The item that ends at i of chunk. */
  item(chunk: string, i: number): ItemText {
    this.pieces.push(chunk.slice(this.itemStart, i + 1));
    const item = { text: this.pieces.join(''), line: this.itemLine, col: this.itemCol };
    this.pieces = [];
    this.itemStart = -1;
    this.expect = 'comma-or-end';
    return item;
  }

  /** The outer key's characters, up to its closing quote. */
  keyChar(ch: string, c: number): void {
    this.keyText += ch;
    this.col++;
    if (c === QUOTE) {
      if (this.keyText !== '"nftables"') this.fail(`, found ${this.keyText.slice(1)}`);
      this.keyText = '';
      this.expect = 'colon';
    } else if (this.keyText.length > 12) {
      this.fail('');
    }
  }

  /** A character of the outer document, at i of its chunk. */
  outside(c: number, i: number): void {
    if (WS.has(c)) {
      if (c === 0x0a) {
        this.line++;
        this.col = 1;
      } else this.col++;
      return;
    }
    this.token(c, i);
    this.col++;
  }

  private token(c: number, i: number): void {
    switch (this.expect) {
      case 'open':
        if (c !== LBRACE) this.fail(c === 0x74 ? ' (this looks like `nft list ruleset` text; use `nft -j list ruleset`)' : '');
        this.expect = 'key';
        return;
      case 'key':
        if (c !== QUOTE) this.fail('');
        this.keyText = '"';
        return;
      case 'colon':
        if (c !== COLON) this.fail('');
        this.expect = 'array';
        return;
      case 'array':
        if (c !== LBRACK) this.fail('');
        this.expect = 'item-or-end';
        return;
      case 'item-or-end':
      case 'item':
        if (c === RBRACK && this.expect === 'item-or-end') {
          this.expect = 'close';
          return;
        }
        if (c !== LBRACE) this.fail('');
        this.depth = 1;
        this.itemStart = i;
        this.itemLine = this.line;
        this.itemCol = this.col;
        return;
      case 'comma-or-end':
        if (c === COMMA) this.expect = 'item';
        else if (c === RBRACK) this.expect = 'close';
        else this.fail('');
        return;
      case 'close':
        if (c !== RBRACE) this.fail('');
        this.expect = 'eof';
        return;
      case 'eof':
        this.fail('');
    }
  }
}
