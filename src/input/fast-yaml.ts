// A fast reader for the YAML that Kubernetes tools print: block mappings and sequences,
// single-line plain and quoted scalars, literal block scalars and single-line flow
// collections. It reads one document at a time and gives the same value as the `yaml`
// package's parse + toJS (core schema) would, or gives up: anything outside that subset
// (anchors, tags, comments after values, multi-line plain or quoted scalars, folded
// scalars, tabs, ...) throws NotFast, and the caller reads that document with the `yaml`
// package instead. Giving up is always safe; guessing never is, so every check below
// errs on the side of giving up.

/** Thrown when a document uses YAML this reader does not handle; the reason is for tests. */
export class NotFast extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'NotFast';
  }
}

/** As deep as a document may nest here; deeper ones are left to the full parser and its limits. */
export const FAST_MAX_DEPTH = 64;
// The YAML spec limits implicit keys to 1024 characters; stay well inside it.
const MAX_KEY_LENGTH = 1000;

const SPACE = 0x20;
const DASH = 0x2d;
const COLON = 0x3a;
const HASH = 0x23;
const DQUOTE = 0x22;
const SQUOTE = 0x27;

// ---- plain scalars: the core schema, as the `yaml` package resolves it -----------------

const NULL_RE = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL_RE = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const OCT_RE = /^0o[0-7]+$/;
const INT_RE = /^[-+]?[0-9]+$/;
const HEX_RE = /^0x[0-9a-fA-F]+$/;
const NAN_INF_RE = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const EXP_RE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT_RE = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/**
 * The value of a plain scalar: null, boolean, integer or float when the core schema's
 * patterns match (tried in the `yaml` package's order), else the text itself.
 */
export function resolvePlain(s: string): unknown {
  const c = s.charCodeAt(0);
  // Most scalars are names and addresses. Of the forms that are not strings, only null,
  // true and false (three spellings each) start with a letter.
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x7a) return wordScalar(s);
  if (isDigit(c) && !mayBeNumber(s)) return s;
  if (NULL_RE.test(s)) return null;
  if (BOOL_RE.test(s)) return c === 0x74 || c === 0x54;
  if (OCT_RE.test(s)) return parseInt(s.substring(2), 8);
  if (INT_RE.test(s)) return parseInt(s, 10);
  if (HEX_RE.test(s)) return parseInt(s.substring(2), 16);
  if (NAN_INF_RE.test(s)) return s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? -Infinity : Infinity;
  if (EXP_RE.test(s) || FLOAT_RE.test(s)) return parseFloat(s);
  return s;
}

/** A plain scalar that starts with a letter: null, true, false as NULL_RE and BOOL_RE spell them, else the text. */
function wordScalar(s: string): unknown {
  switch (s) {
    case 'null':
    case 'Null':
    case 'NULL':
      return null;
    case 'true':
    case 'True':
    case 'TRUE':
      return true;
    case 'false':
    case 'False':
    case 'FALSE':
      return false;
    default:
      return s;
  }
}

/**
 * Whether `t` stands in `s` at p. A copy of the piece compared with ===, which compares
 * in native code: faster than a loop over char codes (and startsWith with a position is
 * slower still on a large text), and the copy dies young.
 */
function textAt(s: string, p: number, t: string): boolean {
  return s.slice(p, p + t.length) === t;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * For a scalar that starts with a digit: false when no number pattern can match it, as
 * for addresses and CIDRs. Numbers hold at most one dot, and only digits, "." "+" "-",
 * the letters of hex digits and exponents, and the "o" and "x" of 0o and 0x.
 */
function mayBeNumber(s: string): boolean {
  let dots = 0;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) continue;
    if (c === 0x2e) {
      if (++dots > 1) return false;
      continue;
    }
    const lower = c | 0x20;
    if (c === 0x2b || c === 0x2d || (lower >= 0x61 && lower <= 0x66) || lower === 0x6f || lower === 0x78) continue;
    return false;
  }
  return true;
}

// Digit strings this long or shorter are exact doubles, so they may be summed by hand.
const MAX_EXACT_DIGITS = 15;

/**
 * The plain scalar s[p, e) (not empty), as resolvePlain gives it. The commonest forms
 * that are not strings (port numbers, true, false) are read in place, without a copy of
 * their text.
 */
export function resolvePlainAt(s: string, p: number, e: number): unknown {
  const c = s.charCodeAt(p);
  if (isDigit(c) && e - p <= MAX_EXACT_DIGITS) {
    // A decimal integer, as INT_RE and parseInt read it (leading zeros included).
    let n = c - 0x30;
    let i = p + 1;
    for (; i < e; i++) {
      const d = s.charCodeAt(i);
      if (!isDigit(d)) break;
      n = n * 10 + (d - 0x30);
    }
    if (i === e) return n;
  } else if (c === 0x74 && e - p === 4 && textAt(s, p, 'true')) return true;
  else if (c === 0x66 && e - p === 5 && textAt(s, p, 'false')) return false;
  else if (((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) && e - p <= MAX_SHARED_WORD) return sharedWord(s, p, e);
  return resolvePlain(s.slice(p, e));
}

// Short words recur (node names, protocols, namespaces, port names): the last one seen
// with a given hash is kept, and the same text gives that same string again. Fewer
// strings are made, and the ones kept to the end are shared.
const MAX_SHARED_WORD = 32;
const WORD_CACHE_SIZE = 1024;
const wordCache: (string | undefined)[] = new Array<string | undefined>(WORD_CACHE_SIZE).fill(undefined);

/** The plain scalar s[p, e), which starts with a letter: null, true, false or the text (see wordScalar). */
function sharedWord(s: string, p: number, e: number): unknown {
  const len = e - p;
  const h = (len * 131 + s.charCodeAt(p + 1) * 31 + s.charCodeAt(p + (len >> 1)) * 7 + s.charCodeAt(e - 1)) & (WORD_CACHE_SIZE - 1);
  const text = s.slice(p, e);
  const cached = wordCache[h];
  if (cached === text) return cached;
  const v = wordScalar(text);
  if (typeof v === 'string') wordCache[h] = v;
  return v;
}

// ---- quoted scalars --------------------------------------------------------------------

// Escapes that mean the same in YAML and JSON; anything else is left to the full parser.
const JSON_ESCAPES = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/g;

function decodeDoubleQuoted(body: string): string {
  if (body.indexOf('\\') === -1) return body;
  if (body.replace(JSON_ESCAPES, '').indexOf('\\') !== -1) throw new NotFast('escape outside the JSON set');
  return JSON.parse(`"${body}"`) as string;
}

/**
 * Whether the plain scalar s[p, e) (no trailing space) holds " #" (a comment), ": " or
 * ends in ":" (a mapping), which the full parser reads otherwise.
 */
function hasPlainIndicator(s: string, p: number, e: number): boolean {
  for (let i = p; i < e; i++) {
    const c = s.charCodeAt(i);
    if (c === SPACE) {
      if (s.charCodeAt(i + 1) === HASH) return true;
    } else if (c === COLON) {
      if (i + 1 === e || s.charCodeAt(i + 1) === SPACE) return true;
    }
  }
  return false;
}

/** Characters that cannot start a plain scalar here (the rest of YAML's indicators, and ours). */
function isPlainStart(c: number): boolean {
  // - ? : , [ ] { } # & * ! | > ' " % @ `
  switch (c) {
    case 0x2d: // '-': only "- " is an indicator, and callers check that first
      return true;
    case 0x3f:
    case 0x3a:
    case 0x2c:
    case 0x5b:
    case 0x5d:
    case 0x7b:
    case 0x7d:
    case 0x23:
    case 0x26:
    case 0x2a:
    case 0x21:
    case 0x7c:
    case 0x3e:
    case 0x27:
    case 0x22:
    case 0x25:
    case 0x40:
    case 0x60:
    case SPACE:
      return false;
    default:
      return true;
  }
}

function isKeyStart(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f;
}

function isKeyChar(c: number): boolean {
  return isKeyStart(c) || c === 0x2e || c === 0x2f || c === DASH;
}

// Keys seen before, by their first two characters (a few each): the same few dozen keys
// recur in every document. A known key is recognised by one comparison with the text,
// without scanning the key first, and its string is reused, which spares a copy and its
// lookup as a property name.
const KEY_SLOTS = 256;
const KEY_WAYS = 4;
const knownKeys: (string | undefined)[] = new Array<string | undefined>(KEY_SLOTS * KEY_WAYS).fill(undefined);

function keySlot(s: string, p: number): number {
  return ((s.charCodeAt(p) * 31 + s.charCodeAt(p + 1)) & (KEY_SLOTS - 1)) * KEY_WAYS;
}

/**
 * The known plain key that stands at p as a whole entry key (followed by ": ", or ":" at
 * the line's end `le`), else null. Known keys are made of key characters only, so a scan
 * of the key would stop at that colon too.
 */
function knownKeyAt(s: string, p: number, le: number): string | null {
  const slot = keySlot(s, p);
  for (let w = slot; w < slot + KEY_WAYS; w++) {
    const k = knownKeys[w];
    if (k === undefined) return null;
    const colon = p + k.length;
    if (s.charCodeAt(colon) === COLON && (colon + 1 === le || s.charCodeAt(colon + 1) === SPACE) && textAt(s, p, k)) return k;
  }
  return null;
}

/** The plain key s[p, e) (not empty, key characters only), which must resolve to a string. */
function plainKey(s: string, p: number, e: number): string {
  const k = resolvePlain(s.slice(p, e));
  if (typeof k !== 'string') throw new NotFast('key that is not a string');
  // Into a free way of its slot, or in place of the slot's last one.
  const slot = keySlot(s, p);
  let w = slot;
  while (w < slot + KEY_WAYS - 1 && knownKeys[w] !== undefined) w++;
  knownKeys[w] = k;
  return k;
}

/** Object keys; the parser gives up on keys that JavaScript treats specially. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') throw new NotFast('__proto__ key');
  if (Object.prototype.hasOwnProperty.call(obj, key)) throw new NotFast('duplicate key');
  obj[key] = value;
}

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

/** A flow collection (or scalar inside one) that opens and closes on one line. */
class FlowReader {
  pos: number;
  nullField = false;

  constructor(
    private readonly s: string,
    start: number,
    private readonly le: number,
    private depth: number,
  ) {
    this.pos = start;
  }

  private skip(): void {
    while (this.pos < this.le && this.s.charCodeAt(this.pos) === SPACE) this.pos++;
    if (this.pos >= this.le) throw new NotFast('flow collection over several lines');
    if (this.s.charCodeAt(this.pos) === HASH) throw new NotFast('comment in a flow collection');
  }

  node(): unknown {
    const c = this.s.charCodeAt(this.pos);
    if (c === 0x5b) return this.seq();
    if (c === 0x7b) return this.map();
    return this.scalar().value;
  }

  private open(): void {
    if (++this.depth > FAST_MAX_DEPTH) throw new NotFast('nested too deep');
    this.pos++;
    this.skip();
  }

  /** After an item: "," then more, or the closing bracket. Trailing commas are left to the full parser. */
  private next(close: number): boolean {
    this.skip();
    const c = this.s.charCodeAt(this.pos);
    if (c === close) {
      this.pos++;
      this.depth--;
      return false;
    }
    if (c !== 0x2c) throw new NotFast('expected "," in a flow collection');
    this.pos++;
    this.skip();
    const d = this.s.charCodeAt(this.pos);
    if (d === 0x2c || d === 0x5d || d === 0x7d) throw new NotFast('empty entry in a flow collection');
    return true;
  }

  private seq(): unknown[] {
    this.open();
    const arr: unknown[] = [];
    if (this.s.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      this.depth--;
      return arr;
    }
    do {
      const item = this.node();
      this.skip();
      if (this.s.charCodeAt(this.pos) === COLON) throw new NotFast('single-pair mapping in a flow sequence');
      arr.push(item);
    } while (this.next(0x5d));
    return arr;
  }

  private map(): Record<string, unknown> {
    this.open();
    const obj: Record<string, unknown> = {};
    if (this.s.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      this.depth--;
      return obj;
    }
    do {
      const keyStart = this.pos;
      const c = this.s.charCodeAt(keyStart);
      if (c === 0x5b || c === 0x7b) throw new NotFast('collection as a key');
      const k = this.scalar();
      if (this.pos - keyStart > MAX_KEY_LENGTH) throw new NotFast('long key');
      const key = k.value;
      if (typeof key !== 'string') throw new NotFast('key that is not a string');
      this.skip();
      if (this.s.charCodeAt(this.pos) !== COLON) throw new NotFast('flow mapping entry without a value');
      this.pos++;
      const after = this.s.charCodeAt(this.pos);
      if (!k.quoted && after !== SPACE) throw new NotFast('":" right after a plain key');
      this.skip();
      const d = this.s.charCodeAt(this.pos);
      if (d === 0x2c || d === 0x7d) throw new NotFast('flow mapping entry without a value');
      const value = this.node();
      if (value === null) this.nullField = true;
      setKey(obj, key, value);
    } while (this.next(0x7d));
    return obj;
  }

  /** A quoted or plain scalar; plain ones end at a flow indicator or ": ". */
  private scalar(): { value: unknown; quoted: boolean } {
    const { s, le } = this;
    const p = this.pos;
    const c = s.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      let i = p + 1;
      for (; i < le; i++) {
        const x = s.charCodeAt(i);
        if (c === DQUOTE && x === 0x5c) i++;
        else if (x === c) {
          if (c === SQUOTE && s.charCodeAt(i + 1) === SQUOTE) i++;
          else break;
        }
      }
      if (i >= le) throw new NotFast('quoted scalar over several lines');
      const body = s.slice(p + 1, i);
      this.pos = i + 1;
      return { value: c === DQUOTE ? decodeDoubleQuoted(body) : body.replaceAll("''", "'"), quoted: true };
    }
    if (!isPlainStart(c) || c === DASH) throw new NotFast(`flow scalar starting with ${JSON.stringify(s[p])}`);
    let i = p;
    for (; i < le; i++) {
      const x = s.charCodeAt(i);
      if (x === 0x2c || x === 0x5b || x === 0x5d || x === 0x7b || x === 0x7d) break;
      if (x === COLON) {
        const n = s.charCodeAt(i + 1);
        if (i + 1 >= le || n === SPACE || n === 0x2c || n === 0x5b || n === 0x5d || n === 0x7b || n === 0x7d) break;
      }
      if (x === HASH && s.charCodeAt(i - 1) === SPACE) throw new NotFast('comment in a flow collection');
    }
    let e = i;
    while (s.charCodeAt(e - 1) === SPACE) e--;
    this.pos = i;
    return { value: resolvePlain(s.slice(p, e)), quoted: false };
  }
}
