// `mark set mark or 0x00004000`: the packet mark changed.
import type { Stmt } from '../expr.js';
import { isObj } from '../expr-json-read.js';
import { hex, NOT_OURS } from '../expr-text-read.js';
import { markHex } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type MarkSet = Extract<Stmt, { t: 'mark-set' }>;

export const markSet: StmtForms<MarkSet> = {
  text(o, s) {
    o.str('mark set mark ');
    o.str(s.op);
    o.str(' ');
    o.str(markHex(s.value));
  },
  json: (s) => ({
    mangle: { key: { meta: { key: 'mark' } }, value: { [s.op === 'or' ? '|' : '^']: [{ meta: { key: 'mark' } }, s.value] } },
  }),
  jsonKeys: ['mangle'],
  fromJson(body) {
    if (!isObj(body) || !isObj(body.value)) return null;
    const op = '|' in body.value ? 'or' : '^' in body.value ? 'xor' : null;
    const args = body.value[op === 'or' ? '|' : '^'];
    return op && Array.isArray(args) && typeof args[1] === 'number' ? { t: 'mark-set', op, value: args[1] } : null;
  },
  // `mark` also starts a match of the mark; text-read.ts tries that when this is not it.
  textWords: ['mark'],
  fromText(t) {
    t.expect('mark');
    t.expect('set');
    t.expect('mark');
    const op = t.next();
    if (op !== 'or' && op !== 'xor') throw NOT_OURS;
    return { t: 'mark-set', op, value: hex(t.next()) };
  },
};
