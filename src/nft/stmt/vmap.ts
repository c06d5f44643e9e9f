// `KEY vmap @map`: a verdict looked up in a named map.
import type { Stmt } from '../expr.js';
import { isObj, readExpr } from '../expr-json-read.js';
import { exprJson } from '../expr-json.js';
import { expr, name, NOT_OURS } from '../expr-text-read.js';
import { writeExpr } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type Vmap = Extract<Stmt, { t: 'vmap' }>;

export const vmap: StmtForms<Vmap> = {
  text(o, s) {
    writeExpr(o, s.key);
    o.str(' vmap @');
    o.name(s.map);
  },
  json: (s) => ({ vmap: { key: exprJson(s.key), data: `@${s.map}` } }),
  // Shared with numgen-vmap, whose data is a literal map rather than a map's name.
  jsonKeys: ['vmap'],
  fromJson(body) {
    if (!isObj(body) || typeof body.data !== 'string' || !body.data.startsWith('@')) return null;
    const key = readExpr(body.key);
    return key ? { t: 'vmap', key, map: body.data.slice(1) } : null;
  },
  textWords: [],
  fromText(t) {
    const key = expr(t);
    t.expect('vmap');
    const map = t.next();
    if (!map.startsWith('@')) throw NOT_OURS;
    return { t: 'vmap', key, map: name(map.slice(1)) };
  },
};
