// `numgen random mod N vmap { 0 : V0 , 1 : V1 }`: a verdict drawn at random (the endpoints
// of a Service).
import type { Stmt, Verdict } from '../expr.js';
import { isObj, readVerdict } from '../expr-json-read.js';
import { verdictJson, type Json } from '../expr-json.js';
import { expr, number, NOT_OURS, verdict, type Tokens } from '../expr-text-read.js';
import { writeVerdict } from '../expr-text.js';
import type { StmtForms } from './forms.js';

type NumgenVmap = Extract<Stmt, { t: 'numgen-vmap' }>;

export const numgenVmap: StmtForms<NumgenVmap> = {
  text(o, s) {
    o.str('numgen random mod ');
    o.num(s.mod);
    o.str(' vmap { ');
    for (let i = 0; i < s.targets.length; i++) {
      if (i > 0) o.str(' , ');
      o.num(i);
      o.str(' : ');
      writeVerdict(o, s.targets[i]);
    }
    o.str(' }');
  },
  json: (s) => ({
    vmap: {
      key: { numgen: { mode: 'random', mod: s.mod, offset: 0 } },
      data: { set: s.targets.map((v, i) => [i, verdictJson(v)]) },
    },
  }),
  jsonKeys: ['vmap'],
  fromJson: (body) => (isObj(body) ? readNumgenVmap(body.key, body.data) : null),
  textWords: [],
  fromText(t) {
    const left = expr(t);
    t.expect('vmap');
    if (left.t !== 'numgen') throw NOT_OURS;
    return numgenVmapText(t, left.mod);
  },
};

function readNumgenVmap(key: Json, data: Json): NumgenVmap | null {
  if (!isObj(key) || !isObj(key.numgen) || !isObj(data) || !Array.isArray(data.set)) return null;
  const targets: Verdict[] = [];
  for (const [i, entry] of data.set.entries()) {
    if (!Array.isArray(entry) || entry.length !== 2 || entry[0] !== i) return null;
    const v = readVerdict(entry[1]);
    if (!v) return null;
    targets.push(v);
  }
  return typeof key.numgen.mod === 'number' ? { t: 'numgen-vmap', mod: key.numgen.mod, targets } : null;
}

function numgenVmapText(t: Tokens, mod: number): NumgenVmap {
  t.expect('{');
  const targets: Verdict[] = [];
  for (;;) {
    if (number(t.next()) !== targets.length) throw NOT_OURS;
    t.expect(':');
    targets.push(verdict(t));
    const sep = t.next();
    if (sep === '}') return { t: 'numgen-vmap', mod, targets };
    if (sep !== ',') throw NOT_OURS;
  }
}
