// Every statement kind and its forms, keyed by kind. A kind added to Stmt (expr.ts) fails
// the type check here until it has a module with every form; the writers (text.ts writeStmt,
// json.ts stmtJson) and the readers (json-read.ts readStmtShape, text-read.ts) go through
// this map, and live/compact/stmt-listing.ts keeps the listing's form the same way.
//
// Only this file imports the kind modules. They are built on the writers and readers of
// expressions (expr-text.ts, expr-json.ts, expr-text-read.ts, expr-json-read.ts), which must
// never import this map: the statement-level modules that do (text.ts, json.ts,
// text-read.ts, json-read.ts) would then be in a cycle with the kinds, and loading a kind's
// module first would reach this map before the kind's object was made.
import type { Stmt } from '../expr.js';
import { dnat } from './dnat.js';
import type { StmtForms } from './forms.js';
import { markSet } from './mark-set.js';
import { masquerade } from './masquerade.js';
import { match } from './match.js';
import { mapAddrDnat } from './map-addr-dnat.js';
import { mapDnat } from './map-dnat.js';
import { numgenDnat } from './numgen-dnat.js';
import { numgenVmap } from './numgen-vmap.js';
import { reject } from './reject.js';
import { update } from './update.js';
import { verdict } from './verdict.js';
import { vmap } from './vmap.js';

export type { StmtForms } from './forms.js';

export const STMT_FORMS: { [K in Stmt['t']]: StmtForms<Extract<Stmt, { t: K }>> } = {
  match,
  vmap,
  'numgen-vmap': numgenVmap,
  verdict,
  'mark-set': markSet,
  masquerade,
  dnat,
  'numgen-dnat': numgenDnat,
  'map-dnat': mapDnat,
  'map-addr-dnat': mapAddrDnat,
  update,
  reject,
};

/** The forms of a statement's kind. */
export function formsOf(s: Stmt): StmtForms<Stmt> {
  return STMT_FORMS[s.t] as StmtForms<Stmt>;
}

const ALL = Object.values(STMT_FORMS) as StmtForms<Stmt>[];

/** The kinds whose forms list each key, in the order of STMT_FORMS. */
function byKey(keys: (f: StmtForms<Stmt>) => readonly string[], then: StmtForms<Stmt>[] = []): Map<string, StmtForms<Stmt>[]> {
  const m = new Map<string, StmtForms<Stmt>[]>();
  for (const f of ALL) for (const k of keys(f)) m.set(k, [...(m.get(k) ?? []), f]);
  for (const [k, fs] of m) m.set(k, [...fs, ...then]);
  return m;
}

const BY_JSON_KEY = byKey((f) => f.jsonKeys);
/** The kinds whose text starts with an expression: tried after those a word names. */
const EXPRESSION_LED = ALL.filter((f) => f.textWords.length === 0);
const BY_TEXT_WORD = byKey((f) => f.textWords, EXPRESSION_LED);

/** The kinds a JSON statement with this key may be, to be tried in turn. */
export function formsByJsonKey(key: string): readonly StmtForms<Stmt>[] {
  return BY_JSON_KEY.get(key) ?? [];
}

/** The kinds a statement whose text starts with this word may be, to be tried in turn. */
export function formsByTextWord(word: string | undefined): readonly StmtForms<Stmt>[] {
  return (word !== undefined && BY_TEXT_WORD.get(word)) || EXPRESSION_LED;
}
