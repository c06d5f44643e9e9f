// `masquerade`, `masquerade fully-random`: source NAT to the outgoing interface's address.
import type { Stmt } from '../expr.js';
import { isObj } from '../expr-json-read.js';
import type { StmtForms } from './forms.js';

type Masquerade = Extract<Stmt, { t: 'masquerade' }>;

export const masquerade: StmtForms<Masquerade> = {
  text: (o, s) => o.str(s.fullyRandom ? 'masquerade fully-random' : 'masquerade'),
  json: (s) => ({ masquerade: s.fullyRandom ? { flags: 'fully-random' } : null }),
  jsonKeys: ['masquerade'],
  fromJson: (body) => ({ t: 'masquerade', fullyRandom: isObj(body) && body.flags === 'fully-random' }),
  textWords: ['masquerade'],
  fromText(t) {
    t.next();
    if (t.peek() !== 'fully-random') return { t: 'masquerade', fullyRandom: false };
    t.next();
    return { t: 'masquerade', fullyRandom: true };
  },
};
