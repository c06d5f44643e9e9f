// `LEFT VALUE`, `LEFT != VALUE`: a match of what the packet holds against a value.
import type { Stmt } from '../expr.js';
import { isObj, readExpr, readValue } from '../expr-json-read.js';
import { exprJson, valueJson } from '../expr-json.js';
import { expr, value } from '../expr-text-read.js';
import { writeExpr, writeValue } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type Match = Extract<Stmt, { t: 'match' }>;

export const match: StmtForms<Match> = {
  text(o, s) {
    writeExpr(o, s.left);
    o.str(s.left.t === 'and' ? ` ${s.op} ` : s.op === '==' ? ' ' : ' != ');
    writeValue(o, s.right);
  },
  json(s) {
    const isFlag = s.left.t === 'ct';
    const op = isFlag && s.op === '==' ? 'in' : s.op;
    return { match: { op, left: exprJson(s.left), right: valueJson(s.right) } };
  },
  jsonKeys: ['match'],
  fromJson(body) {
    if (!isObj(body)) return null;
    const left = readExpr(body.left);
    const right = left && readValue(left, body.right);
    const op = body.op === 'in' ? '==' : body.op;
    return left && right && (op === '==' || op === '!=') ? { t: 'match', left, op, right } : null;
  },
  textWords: [],
  fromText(t) {
    const left = expr(t);
    let op: '==' | '!=' = '==';
    if (t.peek() === '!=' || (left.t === 'and' && t.peek() === '==')) op = t.next() as '==' | '!=';
    return { t: 'match', left, op, right: value(t, left) };
  },
};
