// Printing straight into a buffer as UTF-8: what the text table's stores and the printer
// of its output share. ASCII, nearly all of nft text, is copied by a loop: a call into
// the encoder costs more than the copy of a word.
import type { IP } from '../net/ip.js';
import { formatIP } from '../net/ip.js';
import type { TextOut } from './text.js';

export abstract class Utf8Out implements TextOut {
  protected buf: Buffer = Buffer.alloc(0);
  /** Where the next byte goes in buf. */
  protected at = 0;

  /** Makes at least n bytes free after `at` (buf and `at` may change). */
  protected abstract room(n: number): void;

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
    this.at = decimal(this.buf, this.at, n);
  }

  ip(ip: IP): void {
    if (ip.family !== 4) {
      this.str(formatIP(ip));
      return;
    }
    if (this.at + 15 > this.buf.length) this.room(15);
    const b = ip.bytes;
    const buf = this.buf;
    let at = decimal(buf, this.at, b[0]);
    for (let i = 1; i < 4; i++) {
      buf[at++] = 0x2e; // '.'
      at = decimal(buf, at, b[i]);
    }
    this.at = at;
  }

  byte(c: number): void {
    if (this.at === this.buf.length) this.room(1);
    this.buf[this.at++] = c;
  }
}

/** n (a whole number from 0 to 2^31 - 1) in decimal at `at`; returns where it ends. */
function decimal(buf: Buffer, at: number, n: number): number {
  if (n < 10) {
    buf[at] = 0x30 + n;
    return at + 1;
  }
  if (n < 100) {
    buf[at] = 0x30 + ((n / 10) | 0);
    buf[at + 1] = 0x30 + (n % 10);
    return at + 2;
  }
  let digits = 3;
  for (let x = (n / 1000) | 0; x > 0; x = (x / 10) | 0) digits++;
  const end = at + digits;
  for (let i = end - 1; i >= at; i--) {
    buf[i] = 0x30 + (n % 10);
    n = (n / 10) | 0;
  }
  return end;
}
