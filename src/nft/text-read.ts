// A rule body in kproxc's own nft text (text.ts, ruleBodyText) read back into statements:
// the inverse of the printer, for the few rules whose comparison needs their statements.
// A table built for printing keeps only each rule's text, and the live listing is turned
// into the same text, so most rules are compared as text; rules whose texts differ are
// compared by key (canonical.ts), which is made from the statements read here.
//
// Each kind reads its own text (stmt/*.ts, fromText), with the readers of expressions and
// values in expr-text-read.ts; here the kind is found. Only what text.ts prints is
// understood, and a reading counts only if printing it gives back the very same text;
// anything else is null.
import type { Stmt } from './expr.js';
import { NOT_OURS, Tokens } from './expr-text-read.js';
import { formsByTextWord } from './stmt/index.js';
import { ruleBodyText } from './text.js';

/** One statement: the kinds its first word names, then those that start with an expression, tried in turn. */
function statement(t: Tokens): Stmt {
  const at = t.at;
  for (const forms of formsByTextWord(t.peek())) {
    try {
      return forms.fromText(t);
    } catch (e) {
      if (e !== NOT_OURS) throw e;
      t.at = at;
    }
  }
  throw NOT_OURS;
}

/** The statements of a rule body that ruleBodyText printed; null when it is not such text. */
export function readRuleText(text: string): Stmt[] | null {
  const t = new Tokens(text.split(' '));
  const stmts: Stmt[] = [];
  try {
    while (!t.done) stmts.push(statement(t));
    if (stmts.length === 0 || ruleBodyText(stmts) !== text) return null;
  } catch (e) {
    if (e === NOT_OURS) return null;
    throw e;
  }
  return stmts;
}
