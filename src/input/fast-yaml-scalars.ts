// Scalars and keys for the fast YAML reader (fast-yaml.ts): plain scalars resolved as the
// `yaml` package's core schema resolves them, quoted scalars whose escapes mean the same in
// YAML and JSON, and the plain keys Kubernetes objects use. Anything else throws NotFast.

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
export const MAX_KEY_LENGTH = 1000;

export const SPACE = 0x20;
export const DASH = 0x2d;
export const COLON = 0x3a;
export const HASH = 0x23;
export const DQUOTE = 0x22;
export const SQUOTE = 0x27;

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

export function decodeDoubleQuoted(body: string): string {
  if (body.indexOf('\\') === -1) return body;
  if (body.replace(JSON_ESCAPES, '').indexOf('\\') !== -1) throw new NotFast('escape outside the JSON set');
  return JSON.parse(`"${body}"`) as string;
}

/**
 * Whether the plain scalar s[p, e) (no trailing space) holds " #" (a comment), ": " or
 * ends in ":" (a mapping), which the full parser reads otherwise.
 */
export function hasPlainIndicator(s: string, p: number, e: number): boolean {
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
export function isPlainStart(c: number): boolean {
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

export function isKeyStart(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f;
}

export function isKeyChar(c: number): boolean {
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
export function knownKeyAt(s: string, p: number, le: number): string | null {
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
export function plainKey(s: string, p: number, e: number): string {
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
export function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') throw new NotFast('__proto__ key');
  if (Object.prototype.hasOwnProperty.call(obj, key)) throw new NotFast('duplicate key');
  obj[key] = value;
}
