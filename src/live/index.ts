// The one entry for reading `nft -j list ruleset` (or `list table`): the live tables kproxc
// owns, as the diff sees them. Two readers stand behind it:
//   - the compact reader (compact/), which keeps rules as text and is started early, on a
//     second thread for a large file, while the snapshot compiles;
//   - the checked reader (checked/), which reads every item with its position and reports
//     every problem where it is.
// The compact read serves unless it reports a problem in a table the diff needs or cannot
// cut the text (not plain `nft -j` output, or too large for one string): then the listing
// is read again by the checked reader, which either reads it or says what is wrong.
import { UserInputError } from '../diag/diagnostic.js';
import { fileChunks } from './chunks.js';
import { readLive, type LiveFilter } from './checked/reader.js';
import { readCompactText, type PendingRead } from './compact/start.js';
import { compactView } from './compact/table.js';
import { contentsView, type LiveTableView } from './view.js';

export type { LiveFilter } from './checked/reader.js';
export { startCompactRead, type PendingRead } from './compact/start.js';
export type { LiveTableView } from './view.js';

export interface LiveSource {
  /** The listing file, or '-' for standard input. */
  readonly path: string;
  /** The compact read of the file started early (startCompactRead); null for standard input. */
  readonly pending: PendingRead | null;
  /** Standard input's text, asked for only when the listing is '-'. */
  readonly stdin: () => string;
}

/**
 * The live tables of `filter` (our table name, the families the snapshot compiles to, the
 * managed sets whose members are read: those the compact read was started with).
 */
export async function readLiveTables(source: LiveSource, filter: LiveFilter): Promise<LiveTableView[]> {
  const { path, pending } = source;
  const { tableName, families } = filter;
  const stdin = path === '-' ? source.stdin() : '';
  const read = pending ? await pending.result() : readCompactText(stdin, tableName, filter.managedSets);
  const relevant = read.problemsIn.some((p) => p === 'any' || families.includes(p));
  if (read.readable && !relevant) return read.tables.filter((t) => families.includes(t.table.family)).map(compactView);
  const name = path === '-' ? '<stdin>' : path;
  try {
    return readLive(path === '-' ? [stdin] : (pending?.again?.() ?? fileChunks(path)), name, filter).map(contentsView);
  } catch (e) {
    throw fileProblem(e, name);
  }
}

/** A file that cannot be opened or read (missing, a directory, no permission) as bad input; anything else as it is. */
function fileProblem(e: unknown, name: string): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return e;
  const message = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : `cannot read: ${code}`;
  return new UserInputError([{ severity: 'error', pos: { file: name, line: 1, col: 1 }, message }]);
}
