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
  let expect: Expect = 'open';
  let line = 1;
  let col = 1;
  // Inside an item: its pieces so far, nesting depth, and string state.
  let pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let itemLine = 0;
  let itemCol = 0;
  let keyText = '';

  const fail = (what: string): never => {
    throw new OuterShapeError(`expected ${WANTED[expect]}${what}`, line, col);
  };

  for (const chunk of chunks) {
    let itemStart = depth > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (depth > 0) {
        // Inside an item only nesting and strings matter; JSON strings hold no newline.
        // (A plain loop: skipping ahead with regular expressions measured no faster.)
        if (inString) {
          if (escaped) escaped = false;
          else if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) inString = false;
        } else if (c === QUOTE) inString = true;
        else if (c === LBRACE || c === LBRACK) depth++;
        else if (c === RBRACE || c === RBRACK) {
          depth--;
          if (depth === 0) {
            pieces.push(chunk.slice(itemStart, i + 1));
            yield { text: pieces.join(''), line: itemLine, col: itemCol };
            pieces = [];
            itemStart = -1;
            expect = 'comma-or-end';
          }
        } else if (c === 0x0a) {
          line++;
          col = 0;
        }
        col++;
        continue;
      }
      if (expect === 'key' && keyText !== '') {
        // Reading the key's characters up to its closing quote.
        keyText += chunk[i];
        col++;
        if (c === QUOTE) {
          if (keyText !== '"nftables"') fail(`, found ${keyText.slice(1)}`);
          keyText = '';
          expect = 'colon';
        } else if (keyText.length > 12) {
          fail('');
        }
        continue;
      }
      if (WS.has(c)) {
        if (c === 0x0a) {
          line++;
          col = 1;
        } else col++;
        continue;
      }
      switch (expect) {
        case 'open':
          if (c !== LBRACE) fail(c === 0x74 ? " (this looks like `nft list ruleset` text; use `nft -j list ruleset`)" : '');
          expect = 'key';
          break;
        case 'key':
          if (c !== QUOTE) fail('');
          keyText = '"';
          break;
        case 'colon':
          if (c !== COLON) fail('');
          expect = 'array';
          break;
        case 'array':
          if (c !== LBRACK) fail('');
          expect = 'item-or-end';
          break;
        case 'item-or-end':
        case 'item':
          if (c === RBRACK && expect === 'item-or-end') {
            expect = 'close';
            break;
          }
          if (c !== LBRACE) fail('');
          depth = 1;
          itemStart = i;
          itemLine = line;
          itemCol = col;
          break;
        case 'comma-or-end':
          if (c === COMMA) expect = 'item';
          else if (c === RBRACK) expect = 'close';
          else fail('');
          break;
        case 'close':
          if (c !== RBRACE) fail('');
          expect = 'eof';
          break;
        case 'eof':
          fail('');
      }
      col++;
    }
    if (depth > 0 && itemStart !== -1) pieces.push(chunk.slice(itemStart));
  }
  if (expect !== 'eof') {
    throw new OuterShapeError(`the input ends early: expected ${depth > 0 ? 'the end of an object' : WANTED[expect]}`, line, col);
  }
}
