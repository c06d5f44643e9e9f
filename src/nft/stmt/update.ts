// `update @set { KEY }`: the packet's key added to a set (or its timeout renewed).
import type { Stmt } from '../expr.js';
import { isObj, readExpr } from '../json-read.js';
import { exprJson } from '../json.js';
import { expr, name, NOT_OURS } from '../text-read.js';
import { writeExpr } from '../text.js';
import type { StmtForms } from './forms.js';

type Update = Extract<Stmt, { t: 'update' }>;

export const update: StmtForms<Update> = {
  text(o, s) {
    o.str('update @');
    o.name(s.set);
    o.str(' { ');
    writeExpr(o, s.key);
    o.str(' }');
  },
  json: (s) => ({ set: { op: 'update', elem: exprJson(s.key), set: `@${s.set}` } }),
  jsonKeys: ['set'],
  fromJson(body) {
    if (!isObj(body) || body.op !== 'update' || typeof body.set !== 'string' || !body.set.startsWith('@')) return null;
    return ((key) => (key ? { t: 'update' as const, set: (body.set as string).slice(1), key } : null))(readExpr(body.elem));
  },
  textWords: ['update'],
  fromText(t) {
    t.next();
    const set = t.next();
    if (!set.startsWith('@')) throw NOT_OURS;
    t.expect('{');
    const key = expr(t);
    t.expect('}');
    return { t: 'update', set: name(set.slice(1)), key };
  },
};
