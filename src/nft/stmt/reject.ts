// `reject`: an ICMP port unreachable (ICMPv6 in an ip6 table) in answer.
import type { Stmt } from '../expr.js';
import type { StmtForms } from './forms.js';

type Reject = Extract<Stmt, { t: 'reject' }>;

export const reject: StmtForms<Reject> = {
  text: (o) => o.str('reject'),
  json: (_s, family) => ({ reject: { type: family === 'ip6' ? 'icmpv6' : 'icmp', expr: 'port-unreachable' } }),
  jsonKeys: ['reject'],
  fromJson: () => ({ t: 'reject' }),
  textWords: ['reject'],
  fromText(t) {
    t.next();
    return { t: 'reject' };
  },
};
