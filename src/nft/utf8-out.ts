// Printing straight into a buffer as UTF-8: the text table's stores of printed lines
// (text-table.ts PieceStore) print through it. ASCII, nearly all of nft text, is copied by
// a loop: a call into the encoder costs more than the copy of a word.
import { writeDecimal, writeIPv4 } from '../io/digits.js';
import type { IP } from '../net/ip.js';
import { formatIP } from '../net/ip.js';
import type { TextOut } from './expr-text.js';

export abstract class Utf8Out implements TextOut {
  protected buf: Buffer = Buffer.alloc(0);
  /** Where the next byte goes in buf. */
  protected at = 0;

  /**
   * Where in buf the first and the last text with a character above ASCII was written
   * (-1: none): a store of printed pieces tells by them which pieces are ASCII.
   */
  protected firstNonAscii = -1;
  protected lastNonAscii = -1;

  /** Makes at least n bytes free after `at` (buf and `at` may change). */
  protected abstract room(n: number): void;

  private sawNonAscii(at: number): void {
    if (this.firstNonAscii < 0) this.firstNonAscii = at;
    this.lastNonAscii = at;
  }

  str(s: string): void {
    const n = s.length;
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (this.at + 3 * n > this.buf.length) this.room(3 * n);
    const b = this.buf;
    // Names (a numgen map has one per endpoint) go through the encoder; a loop is
    // quicker for the short words between them.
    if (n > 24) {
      const written = b.write(s, this.at);
      // Only ASCII takes one byte a character.
      if (written !== n) this.sawNonAscii(this.at);
      this.at += written;
      return;
    }
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.sawNonAscii(at);
        this.at = at + b.write(s.slice(i), at);
        return;
      }
      b[at++] = c;
    }
    this.at = at;
  }

  name(s: string): void {
    const n = s.length;
    if (this.at + n > this.buf.length) this.room(n);
    if (n > 24) {
      this.at += this.buf.write(s, this.at, 'latin1');
      return;
    }
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) b[at++] = s.charCodeAt(i);
    this.at = at;
  }

  /** Text already encoded as UTF-8; `ascii` says whether it is ASCII only. */
  utf8(bytes: Uint8Array, ascii: boolean): void {
    const n = bytes.length;
    if (this.at + n > this.buf.length) this.room(n);
    if (!ascii) this.sawNonAscii(this.at);
    // A few bytes are copied faster by hand than by a call into the engine.
    if (n > 16) this.buf.set(bytes, this.at);
    else for (let i = 0; i < n; i++) this.buf[this.at + i] = bytes[i];
    this.at += n;
  }

  num(n: number): void {
    if (!(n >= 0 && n <= 0x7fffffff && n === Math.floor(n))) {
      this.str(String(n));
      return;
    }
    if (this.at + 10 > this.buf.length) this.room(10);
    this.at = writeDecimal(this.buf, this.at, n);
  }

  ip(ip: IP): void {
    if (ip.family !== 4) {
      this.str(formatIP(ip));
      return;
    }
    if (this.at + 15 > this.buf.length) this.room(15);
    const b = ip.bytes;
    this.at = writeIPv4(this.buf, this.at, b);
  }

  byte(c: number): void {
    if (this.at === this.buf.length) this.room(1);
    this.buf[this.at++] = c;
  }
}
