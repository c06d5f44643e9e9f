// `update @set { KEY }`: the packet's key added to a set (or its timeout renewed); with
// `timeout Ns` the element gets the statement's timeout rather than the set's (the
// fast-load layout's table-wide affinity set holds every Service port's clients).
import type { Expr, Stmt } from '../expr.js';
import { isObj, readExpr } from '../expr-json-read.js';
import { exprJson, type Json } from '../expr-json.js';
import { expr, name, NOT_OURS, number, type Tokens } from '../expr-text-read.js';
import { writeExpr } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type Update = Extract<Stmt, { t: 'update' }>;

export const update: StmtForms<Update> = {
  text(o, s) {
    o.str('update @');
    o.name(s.set);
    o.str(' { ');
    writeExpr(o, s.key);
    if (s.timeoutSeconds !== undefined) {
      o.str(' timeout ');
      o.num(s.timeoutSeconds);
      o.str('s');
    }
    o.str(' }');
  },
  json(s) {
    const key = exprJson(s.key);
    const elem = s.timeoutSeconds === undefined ? key : { elem: { val: key, timeout: s.timeoutSeconds } };
    return { set: { op: 'update', elem, set: `@${s.set}` } };
  },
  jsonKeys: ['set'],
  fromJson(body) {
    if (!isObj(body) || body.op !== 'update' || typeof body.set !== 'string' || !body.set.startsWith('@')) return null;
    const elem = readElem(body.elem);
    return elem ? { t: 'update', set: body.set.slice(1), ...elem } : null;
  },
  textWords: ['update'],
  fromText(t) {
    t.next();
    const set = t.next();
    if (!set.startsWith('@')) throw NOT_OURS;
    t.expect('{');
    const key = expr(t);
    const timeoutSeconds = t.peek() === 'timeout' ? (t.next(), durationSeconds(t)) : undefined;
    t.expect('}');
    return timeoutSeconds === undefined ? { t: 'update', set: name(set.slice(1)), key } : { t: 'update', set: name(set.slice(1)), key, timeoutSeconds };
  },
};

/** The key, and the element's own timeout when it has one (`{"elem": {"val": KEY, "timeout": N}}`). */
function readElem(j: Json): { key: Expr; timeoutSeconds?: number } | null {
  if (isObj(j) && isObj(j.elem)) {
    const key = readExpr(j.elem.val);
    const timeout = j.elem.timeout;
    if (!key || typeof timeout !== 'number' || Object.keys(j.elem).length !== 2) return null;
    return { key, timeoutSeconds: timeout };
  }
  const key = readExpr(j);
  return key ? { key } : null;
}

const UNIT_SECONDS: { [unit: string]: number } = { d: 86400, h: 3600, m: 60, s: 1 };

/** `3600s`, or nft's listing form `1h`, `1h30m`, `2d3h4m5s`. */
function durationSeconds(t: Tokens): number {
  const word = t.next();
  const parts = /^(?:\d+[dhms])+$/.test(word) ? word.match(/\d+[dhms]/g) : null;
  if (!parts) throw NOT_OURS;
  return parts.reduce((sum, p) => sum + number(p.slice(0, -1)) * UNIT_SECONDS[p.slice(-1)], 0);
}
