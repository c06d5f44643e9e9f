// What one statement kind carries: every form it has, in one object (one module per kind,
// registered in index.ts). A kind that lacks a form fails the type check there.
import type { Family, Stmt } from '../expr.js';
import type { Json } from '../expr-json.js';
import type { TextOut } from '../expr-text.js';
import type { Tokens } from '../expr-text-read.js';

export interface StmtForms<S extends Stmt> {
  /** Its nft text, in kube-proxy's spelling (writeStmt). */
  text(o: TextOut, s: S): void;
  /** Its libnftables JSON, as nft 1.0.6 lists it (stmtJson). */
  json(s: S, family: Family): Json;
  /** The one key of its JSON object (or keys: a verdict's is its kind): where readers look for it. */
  readonly jsonKeys: readonly string[];
  /** Read by shape from the body of its JSON object (under `key`); null when it is not this kind's. */
  fromJson(body: Json, key: string): S | null;
  /** The words its text starts with; none when it starts with an expression. */
  readonly textWords: readonly string[];
  /** Read from its text (text-read.ts); throws NOT_OURS when the tokens are not its text. */
  fromText(t: Tokens): S;
}
