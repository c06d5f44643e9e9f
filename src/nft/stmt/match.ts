// `LEFT VALUE`, `LEFT != VALUE`: a match of what the packet holds against a value. A flag
// of `ct state` or `ct status` is tested as nft writes it: `ct status dnat` (set, listed in
// JSON as "in"), `ct status ! confirmed` (clear, "!"); nft's `ct status != confirmed`
// would compare the whole bitmask, and kproxc never writes it.
import type { Stmt } from '../expr.js';
import { isObj, readExpr, readValue } from '../expr-json-read.js';
import { exprJson, valueJson } from '../expr-json.js';
import { expr, value } from '../expr-text-read.js';
import { writeExpr, writeValue } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type Match = Extract<Stmt, { t: 'match' }>;

const isFlag = (left: Match['left']) => left.t === 'ct' && left.key !== 'direction';
/** A flag test's JSON operators, as what they mean here. */
const FLAG_OPS: Record<string, '==' | '!=' | undefined> = { in: '==', '==': '==', '!': '!=' };

export const match: StmtForms<Match> = {
  text(o, s) {
    writeExpr(o, s.left);
    o.str(s.left.t === 'and' ? ` ${s.op} ` : s.op === '==' ? ' ' : isFlag(s.left) ? ' ! ' : ' != ');
    writeValue(o, s.right);
  },
  json(s) {
    const op = isFlag(s.left) ? (s.op === '==' ? 'in' : '!') : s.op;
    return { match: { op, left: exprJson(s.left), right: valueJson(s.right) } };
  },
  jsonKeys: ['match'],
  fromJson(body) {
    if (!isObj(body)) return null;
    const left = readExpr(body.left);
    const right = left && readValue(left, body.right);
    if (!left || !right) return null;
    const op = isFlag(left) ? FLAG_OPS[String(body.op)] : body.op;
    return op === '==' || op === '!=' ? { t: 'match', left, op, right } : null;
  },
  textWords: [],
  fromText(t) {
    const left = expr(t);
    let op: '==' | '!=' = '==';
    if (isFlag(left)) {
      if (t.peek() === '!') {
        t.next();
        op = '!=';
      }
    } else if (t.peek() === '!=' || (left.t === 'and' && t.peek() === '==')) op = t.next() as '==' | '!=';
    return { t: 'match', left, op, right: value(t, left) };
  },
};
