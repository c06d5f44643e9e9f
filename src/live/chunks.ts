// A listing as a sequence of text chunks, so that a listing larger than one JavaScript
// string can hold (about 512 MiB) can still be read, and never sits in memory whole.
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const CHUNK_BYTES = 1 << 20;

/**
 * Opens the file now (so that a missing file throws here, with its fs error code) and
 * returns its text in chunks, read as they are consumed; the file is closed at the end.
 */
export function fileChunks(file: string): Iterable<string> {
  const fd = fs.openSync(file, 'r');
  return (function* () {
    try {
      const buf = Buffer.allocUnsafe(CHUNK_BYTES);
      const decoder = new StringDecoder('utf8');
      for (;;) {
        const n = fs.readSync(fd, buf, 0, CHUNK_BYTES, null);
        if (n === 0) break;
        yield decoder.write(buf.subarray(0, n));
      }
      const rest = decoder.end();
      if (rest) yield rest;
    } finally {
      fs.closeSync(fd);
    }
  })();
}

/** Text of bytes already read, in pieces as fileChunks gives a file's. */
export function* bufferChunks(bytes: Buffer): Generator<string> {
  const decoder = new StringDecoder('utf8');
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield decoder.write(bytes.subarray(at, at + CHUNK_BYTES));
  const rest = decoder.end();
  if (rest) yield rest;
}
