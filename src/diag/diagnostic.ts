// A diagnostic is a value: where (file, line, column), what (kind, object, field) and why.
// Stages collect them and the CLI prints them all together, so one run reports every problem.

export type Severity = 'error' | 'warning';

export interface Position {
  file: string;
  line: number; // 1-based
  col: number; // 1-based
}

export interface Diagnostic {
  severity: Severity;
  pos: Position;
  kind?: string; // Kubernetes kind of the object, e.g. "Service"
  object?: string; // "namespace/name" or "name"
  field?: string; // dotted field path, e.g. "spec.ports[0].port"
  message: string;
  /** About input left unread that cannot change the output (objects of other kinds): printed after the rest. */
  minor?: boolean;
}

/** Longest text from the input shown in a diagnostic; the rest is elided. */
const SHOWN_MAX = 100;

/** Text from the input quoted, and elided when long. */
export function quoteText(s: string): string {
  return s.length > SHOWN_MAX ? `${JSON.stringify(s.slice(0, SHOWN_MAX))}...` : JSON.stringify(s);
}

/** Text from the input as a diagnostic shows it: as it is when plain, else quoted, so it stays one line. */
export function displayText(s: string): string {
  return s.length <= SHOWN_MAX && /^[A-Za-z0-9._/:@-]*$/.test(s) ? s : quoteText(s);
}

/**
 * Control characters (line breaks, terminal escapes) escaped, so that a message that
 * quotes input stays one line and cannot drive the terminal.
 */
function oneLine(s: string): string {
  return s.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/g, (c) => (c === '\n' || c === '\r' ? ' ' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** FILE:LINE:COL: Kind namespace/name: field.path: message (parts that are unknown are left out). */
export function formatDiagnostic(d: Diagnostic): string {
  // Standard input is named <stdin> unquoted, so that editors can jump to it like a file.
  const file = d.pos.file === '<stdin>' ? d.pos.file : displayText(d.pos.file);
  const parts = [`${file}:${d.pos.line}:${d.pos.col}`];
  if (d.kind) parts.push(d.object !== undefined ? `${displayText(d.kind)} ${displayText(d.object)}` : displayText(d.kind));
  if (d.field) parts.push(d.field);
  const prefix = d.severity === 'warning' ? 'warning: ' : '';
  return oneLine(`${parts.join(': ')}: ${prefix}${d.message}`);
}

/**
 * Sorted by file, line, column, then text, so the order of problems is stable; minor ones
 * last, so that what changes the output is read first.
 */
export function sortDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  return [...ds].sort(
    (a, b) =>
      Number(a.minor ?? false) - Number(b.minor ?? false) ||
      (a.pos.file < b.pos.file ? -1 : a.pos.file > b.pos.file ? 1 : 0) ||
      a.pos.line - b.pos.line ||
      a.pos.col - b.pos.col ||
      (formatDiagnostic(a) < formatDiagnostic(b) ? -1 : formatDiagnostic(a) > formatDiagnostic(b) ? 1 : 0),
  );
}

/** Thrown when user input is bad; carries every diagnostic found. Exit code 2. */
export class UserInputError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map(formatDiagnostic).join('\n'));
    this.name = 'UserInputError';
  }
}

/** Thrown for bad command-line usage that is not tied to a file position. Exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Our own bug: an object that fails its own validation, an impossible state. Never the
 * user's fault; the CLI asks for a report and exits 70.
 */
export class InternalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InternalError';
  }
}

export function invariant(cond: unknown, message: string): asserts cond {
  if (!cond) throw new InternalError(message);
}

/**
 * The default of a switch with a case for each kind of a union (a statement's or an
 * expression's `t`): `x` is typed never there only while every kind has its case, so a kind
 * added to the union fails the type check at each such switch. Reached at run time (a value
 * cast from outside the types), it is a bug, named by the kind.
 */
export function assertNever(x: never, what: string): never {
  const v: unknown = x;
  const kind = typeof v === 'object' && v !== null && 't' in v ? v.t : v;
  throw new InternalError(`no case for the ${what} ${JSON.stringify(kind)}`);
}
