// `jump C`, `goto C`, `drop`, `accept`, `return`.
import type { Stmt } from '../expr.js';
import { readVerdictBody } from '../expr-json-read.js';
import { verdictJson } from '../expr-json.js';
import { verdict as readVerdictText } from '../expr-text-read.js';
import { writeVerdict } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type VerdictStmt = Extract<Stmt, { t: 'verdict' }>;

const KINDS = ['jump', 'goto', 'drop', 'accept', 'return'];

export const verdict: StmtForms<VerdictStmt> = {
  text: (o, s) => writeVerdict(o, s.v),
  json: (s) => verdictJson(s.v),
  jsonKeys: KINDS,
  fromJson(body, key) {
    const v = readVerdictBody(key, body);
    return v ? { t: 'verdict', v } : null;
  },
  textWords: KINDS,
  fromText: (t) => ({ t: 'verdict', v: readVerdictText(t) }),
};
