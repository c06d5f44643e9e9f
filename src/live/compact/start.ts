// Reading a live listing compactly (scan.ts, table.ts), on a second thread when the
// listing is large: `diff` compiles the snapshot on the main thread meanwhile, and the
// compact tables come back as a few strings and typed arrays, cheap to hand over.
import * as fs from 'node:fs';
import { isAscii } from 'node:buffer';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Family } from '../../nft/expr.js';
import { readCompact, type CompactRead, type CompactTable } from './table.js';
import { scanListing } from './scan.js';
import { bufferChunks } from '../chunks.js';

// Our tables are ip and ip6 ones; which of them the snapshot needs is known only once it
// is compiled, so both are read and the caller keeps what it needs.
const BOTH: Family[] = ['ip', 'ip6'];
// A listing up to this many bytes is read whole (the checked reader takes a larger one in chunks).
const WHOLE_BYTES = 256 * 2 ** 20;
// A listing this large is read on a second thread; a smaller one is read sooner than a
// thread starts.
const WORKER_BYTES = 8 * 2 ** 20;

const NOT_READ: CompactRead = { tables: [], problemsIn: [], readable: false };
const NONE: readonly string[] = [];

/**
 * A listing's text read compactly; not readable when it must be read by the checked reader.
 * `managedSets`: the sets with timeouts whose members are read (LiveFilter).
 */
export function readCompactText(text: string, tableName: string, managedSets = NONE): CompactRead {
  return readCompact((reader) => scanListing(text, reader, tableName), { tableName, families: BOTH, managedSets });
}

/** A listing's bytes read compactly; not readable when they are too large for one string. */
export function readCompactBytes(bytes: Buffer, tableName: string, managedSets = NONE): CompactRead {
  if (bytes.length > WHOLE_BYTES) return NOT_READ;
  // ASCII (what nft prints, unless a comment says otherwise) is the same text as Latin-1,
  // which becomes a string faster than UTF-8 does.
  const ascii = isAscii(bytes);
  return readCompactText(bytes.toString(ascii ? 'latin1' : 'utf8'), tableName, managedSets);
}

/** A listing file read compactly; not readable when it is too large for one string. */
export function readCompactFile(file: string, tableName: string, managedSets = NONE): CompactRead {
  return readCompactBytes(fs.readFileSync(file), tableName, managedSets);
}

/** Transferable buffers of the tables: moved to the receiving thread, not copied. */
export function transferables(tables: CompactTable[]): ArrayBuffer[] {
  return tables.flatMap((t) => [t.ruleFirst, t.ruleCount, t.handles, t.textEnd, t.commentEnd, t.hasComment, t.elementCounts].map((a) => a.buffer as ArrayBuffer));
}

/** A read that may still be running on another thread. */
export interface PendingRead {
  result(): Promise<CompactRead>;
  /**
   * The listing again, for the checked reader, when it was read from something that cannot be
   * read twice (a pipe, as in `--live <(nft -j list ruleset)`).
   */
  readonly again?: () => Iterable<string>;
  /** Stops a read whose result is no longer wanted. */
  cancel(): void;
}

const WORKER_URL = new URL('./live-worker.js', import.meta.url);

const settled = (read: CompactRead): PendingRead => ({ result: () => Promise.resolve(read), cancel: () => {} });

/**
 * Starts reading a listing file compactly: on a worker thread when it is large (and the
 * worker's module is there: not when running from the TypeScript sources), else at once
 * on this thread. Any failure (a file that cannot be read, a crashed thread) gives a
 * result that is not readable, and the caller reads the file with the checked reader, which reports
 * the problem properly.
 */
export function startCompactRead(file: string, tableName: string, managedSets = NONE, workerBytes = WORKER_BYTES): PendingRead {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return settled(NOT_READ); // reported by the checked reader
  }
  if (!stat.isFile()) return readOnce(file, tableName, managedSets);
  if (stat.size < workerBytes || !fs.existsSync(fileURLToPath(WORKER_URL))) {
    try {
      return settled(readCompactFile(file, tableName, managedSets));
    } catch {
      return settled(NOT_READ);
    }
  }
  const worker = new Worker(WORKER_URL, { workerData: { file, tableName, managedSets } });
  const done = new Promise<CompactRead>((resolve) => {
    worker.once('message', (m: CompactRead | null) => resolve(m ?? NOT_READ));
    worker.once('error', () => resolve(NOT_READ));
    worker.once('exit', () => resolve(NOT_READ));
  });
  return { result: () => done, cancel: () => void worker.terminate() };
}

/** Something that is not a regular file (a pipe, a directory): read now, once, and kept. */
function readOnce(file: string, tableName: string, managedSets: readonly string[]): PendingRead {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return settled(NOT_READ); // a directory, say: reported by the checked reader
  }
  return { ...settled(readCompactBytes(bytes, tableName, managedSets)), again: () => bufferChunks(bytes) };
}
