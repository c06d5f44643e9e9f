// Each statement kind as the compact reader (recorder.ts) reads it from the listing's text,
// after the `{"KEY": ` that opens it: the listing's form of a kind, kept in live/ beside the
// kind's other forms in nft/stmt/ (nft/ imports nothing of live/). Keyed by kind like
// STMT_FORMS, so a kind added to Stmt fails the type check here too; a reader returns the
// parts of the kind's text (text.ts) or null, and a rule it does not read is read by the
// checked reader instead, correctly but slower.
import type { Stmt } from '../../nft/expr.js';
import { STMT_FORMS } from '../../nft/stmt/index.js';
import { INT, IPV4, IPV6, Left, NAME, sticky } from './patterns.js';
import type { Part, Recorder } from './recorder.js';

/** Reads one statement of a kind, after `{"KEY": `; the parts of its text, or null. */
export type ListingReader = (r: Recorder, key: string) => Part[] | null;

const MATCH_OP = sticky('\\{"op": "(==|!=|in)", "left": ');
const VERDICT_WORD = sticky('\\{"(jump|goto|drop|accept|return)": ');
const MARK_OP = sticky('\\{"key": \\{"meta": \\{"key": "mark"\\}\\}, "value": \\{"(\\||\\^)": \\[\\{"meta": \\{"key": "mark"\\}\\}, ');
const NUMGEN = '{"numgen": {"mode": "random", "mod": ';

export const STMT_LISTING: { [K in Stmt['t']]: ListingReader } = {
  match(r) {
    const opMatch = r.piece(MATCH_OP);
    if (!opMatch) return null;
    const left = r.expr();
    if (left === null || !r.lit(', "right": ')) return null;
    // nft lists `ct state new` and `ct status dnat` with the operator "in", and only those.
    const op = opMatch[1];
    if ((op === 'in') !== (r.left === Left.CtState || r.left === Left.CtStatus) && op !== '!=') return null;
    const right = r.value();
    if (right === null || !r.lit('}}')) return null;
    if (r.left === Left.Masked) return [...left, ` ${op} `, ...right];
    return op === '!=' ? [...left, ' != ', ...right] : [...left, ' ', ...right];
  },
  vmap(r) {
    // numgen too is read as the key here, when the map is named.
    if (!r.lit('{"key": ')) return null;
    const key = r.expr();
    if (key === null || !r.lit(', "data": "@')) return null;
    const map = r.hole(NAME);
    return map !== null && r.lit('"}}') ? [...key, ' vmap @', { hole: map, as: 'raw' }] : null;
  },
  'numgen-vmap'(r) {
    // A literal map of verdicts has numgen itself as its key (not part of a concat).
    if (!r.lit(`{"key": ${NUMGEN}`)) return null;
    const mod = r.hole(INT);
    if (mod === null || !r.lit(', "offset": 0}}, "data": ')) return null;
    if (!r.lit('{"set": [')) return null;
    const text: Part[] = ['numgen random mod ', { hole: mod, as: 'raw' }, ' vmap { '];
    for (let i = 0; ; i++) {
      if (!r.lit(`[${i}, `)) return null;
      const v = r.piece(VERDICT_WORD);
      const verdict = v && r.verdictBody(v[1]);
      if (!verdict || !r.lit(']')) return null;
      text.push(`${i} : `, ...verdict);
      if (r.lit(']}}}')) return [...text, ' }'];
      if (!r.lit(', ')) return null;
      text.push(' , ');
    }
  },
  verdict: (r, key) => r.verdictBody(key),
  'mark-set'(r) {
    const m = r.piece(MARK_OP);
    const value = m && r.hole(INT);
    return value !== null && r.lit(']}}}') ? [`mark set mark ${m![1] === '|' ? 'or' : 'xor'} `, { hole: value, as: 'mark' }] : null;
  },
  masquerade(r) {
    if (r.lit('null}')) return ['masquerade'];
    return r.lit('{"flags": "fully-random"}}') ? ['masquerade fully-random'] : null;
  },
  dnat(r) {
    if (!r.lit('{"addr": "')) return null;
    // The address first as IPv4; an IPv6 one (dnat to [addr]:port) when it is not.
    const saved = r.save();
    let v6 = false;
    let addr = r.hole(IPV4);
    if (addr === null || !r.ahead('"')) {
      if (addr !== null) r.restore(saved);
      v6 = true;
      addr = r.hole(IPV6);
    }
    if (addr === null || !r.lit('", "port": ')) return null;
    const port = r.hole(INT);
    if (port === null || !r.lit('}}')) return null;
    const a: Part = { hole: addr, as: v6 ? 'v6' : 'raw' };
    return v6 ? ['dnat to [', a, ']:', { hole: port, as: 'raw' }] : ['dnat to ', a, ':', { hole: port, as: 'raw' }];
  },
  'numgen-dnat'(r) {
    // {"family": "ip", "addr": {"map": {"key": NUMGEN, "data": {"set": [[0, {"concat": ["A", P]}], ...]}}}}
    const v6 = r.lit('{"family": "ip6", ');
    if (!v6 && !r.lit('{"family": "ip", ')) return null;
    if (!r.lit(`"addr": {"map": {"key": ${NUMGEN}`)) return null;
    const mod = r.hole(INT);
    if (mod === null || !r.lit(', "offset": 0}}, "data": {"set": [')) return null;
    const text: Part[] = [`dnat ${v6 ? 'ip6' : 'ip'} addr . port to numgen random mod `, { hole: mod, as: 'raw' }, ' map { '];
    for (let i = 0; ; i++) {
      if (!r.lit(`[${i}, {"concat": ["`)) return null;
      const addr = r.hole(v6 ? IPV6 : IPV4);
      const port = addr !== null && r.lit('", ') ? r.hole(INT) : null;
      if (port === null || !r.lit(']}]')) return null;
      text.push(`${i} : `, { hole: addr!, as: v6 ? 'v6' : 'raw' }, ' . ', { hole: port, as: 'raw' });
      if (r.lit(']}}}}}')) return [...text, ' }'];
      if (!r.lit(', ')) return null;
      text.push(' , ');
    }
  },
  'map-dnat'(r) {
    // {"family": "ip", "addr": {"map": {"key": KEY, "data": "@M"}}}
    const v6 = r.lit('{"family": "ip6", ');
    if (!v6 && !r.lit('{"family": "ip", ')) return null;
    if (!r.lit('"addr": {"map": {"key": ')) return null;
    const key = r.expr();
    if (key === null || !r.lit(', "data": "@')) return null;
    const map = r.hole(NAME);
    return map !== null && r.lit('"}}}}') ? [`dnat ${v6 ? 'ip6' : 'ip'} addr . port to `, ...key, ' map @', { hole: map, as: 'raw' }] : null;
  },
  'map-addr-dnat'(r) {
    // {"addr": {"map": {"key": KEY, "data": "@M"}}, "port": P}
    if (!r.lit('{"addr": {"map": {"key": ')) return null;
    const key = r.expr();
    if (key === null || !r.lit(', "data": "@')) return null;
    const map = r.hole(NAME);
    if (map === null || !r.lit('"}}, "port": ')) return null;
    const port = r.hole(INT);
    return port !== null && r.lit('}}') ? ['dnat to ', ...key, ' map @', { hole: map, as: 'raw' }, ':', { hole: port, as: 'raw' }] : null;
  },
  update(r) {
    if (!r.lit('{"op": "update", "elem": ')) return null;
    // With its own timeout the key is wrapped: {"elem": {"val": KEY, "timeout": N}}.
    const ownTimeout = r.lit('{"elem": {"val": ');
    const key = r.expr();
    if (key === null) return null;
    let timeout: Part[] = [];
    if (ownTimeout) {
      if (!r.lit(', "timeout": ')) return null;
      const seconds = r.hole(INT);
      if (seconds === null || !r.lit('}}')) return null;
      timeout = [' timeout ', { hole: seconds, as: 'raw' }, 's'];
    }
    if (!r.lit(', "set": "@')) return null;
    const set = r.hole(NAME);
    return set !== null && r.lit('"}}') ? ['update @', { hole: set, as: 'raw' }, ' { ', ...key, ...timeout, ' }'] : null;
  },
  reject: (r) => (r.lit(`{"type": "${r.family === 'ip6' ? 'icmpv6' : 'icmp'}", "expr": "port-unreachable"}}`) ? ['reject'] : null),
};

// The readers by the key that opens a statement (STMT_FORMS jsonKeys), in STMT_FORMS order.
const BY_KEY = new Map<string, ListingReader[]>();
for (const kind of Object.keys(STMT_FORMS) as Stmt['t'][]) {
  for (const key of STMT_FORMS[kind].jsonKeys) BY_KEY.set(key, [...(BY_KEY.get(key) ?? []), STMT_LISTING[kind]]);
}

/** The readers of the kinds a statement opening with `{"KEY": ` may be, to be tried in turn. */
export function listingReaders(key: string): readonly ListingReader[] {
  return BY_KEY.get(key) ?? [];
}
