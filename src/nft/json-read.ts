// libnftables JSON (as `nft -j list ruleset` prints it) back into statements: the inverse
// of json.ts, for what kproxc itself writes. Each kind's reading is in its module
// (stmt/*.ts, fromJson), made of the expressions, values and verdicts of expr-json-read.ts;
// here is readStmtShape, which finds the kind. A statement read here is only a candidate:
// the listing reader (live/checked/json.ts) writes it back and compares before it trusts it.
import type { Stmt } from './expr.js';
import type { Json } from './expr-json.js';
import { isObj } from './expr-json-read.js';
import { formsByJsonKey } from './stmt/index.js';

/** One statement by its shape: the kinds its key names, tried in turn; null when none reads it. */
export function readStmtShape(j: Json): Stmt | null {
  if (!isObj(j)) return null;
  const keys = Object.keys(j);
  if (keys.length !== 1) return null;
  const key = keys[0];
  for (const forms of formsByJsonKey(key)) {
    const s = forms.fromJson(j[key], key);
    if (s) return s;
  }
  return null;
}
