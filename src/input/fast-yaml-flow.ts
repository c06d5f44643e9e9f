// Flow collections for the fast YAML reader (fast-yaml.ts): `[a, b]` and `{k: v}` that open
// and close on one line, as kubectl prints short lists and maps. Anything else throws NotFast.
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
  isPlainStart,
  resolvePlainAt,
  setKey,
} from './fast-yaml-scalars.js';

/** A flow collection (or scalar inside one) that opens and closes on one line. */
export class FlowReader {
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
    return this.scalar();
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
      const key = this.scalar();
      const quoted = this.quoted;
      if (this.pos - keyStart > MAX_KEY_LENGTH) throw new NotFast('long key');
      if (typeof key !== 'string') throw new NotFast('key that is not a string');
      this.skip();
      if (this.s.charCodeAt(this.pos) !== COLON) throw new NotFast('flow mapping entry without a value');
      this.pos++;
      const after = this.s.charCodeAt(this.pos);
      if (!quoted && after !== SPACE) throw new NotFast('":" right after a plain key');
      this.skip();
      const d = this.s.charCodeAt(this.pos);
      if (d === 0x2c || d === 0x7d) throw new NotFast('flow mapping entry without a value');
      const value = this.node();
      if (value === null) this.nullField = true;
      setKey(obj, key, value);
    } while (this.next(0x7d));
    return obj;
  }

  /** Whether the last scalar read was quoted. */
  private quoted = false;

  /** A quoted or plain scalar; plain ones end at a flow indicator or ": ". */
  private scalar(): unknown {
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
      this.quoted = true;
      return c === DQUOTE ? decodeDoubleQuoted(body) : body.replaceAll("''", "'");
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
    this.quoted = false;
    return resolvePlainAt(s, p, e);
  }
}
