// Random statements of every kind kproxc writes (src/nft/expr.ts), for property tests of
// the readers that must agree with the printers (text.ts, json.ts).
import fc from 'fast-check';
import { parseCIDR, type IP } from '../../src/net/ip.js';
import type { Expr, Stmt, Value, Verdict } from '../../src/nft/expr.js';

export const nameArb = fc.stringMatching(/^[A-Za-z_.][A-Za-z0-9_./-]{0,30}$/);

const ipv4Arb: fc.Arbitrary<IP> = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes) => ({ family: 4, bytes }));
// Mostly zeros, so that compressed spellings (::) come up.
const ipv6Arb: fc.Arbitrary<IP> = fc
  .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })), { minLength: 16, maxLength: 16 })
  .map((b) => ({ family: 6, bytes: Uint8Array.from(b) }));

const prefixArb = (ip: fc.Arbitrary<IP>, bits: number): fc.Arbitrary<Value> =>
  fc.tuple(ip, fc.integer({ min: 0, max: bits })).map(([addr, len]) => {
    const text = addr.family === 4 ? [...addr.bytes].join('.') : [...Array(8).keys()].map((i) => ((addr.bytes[2 * i] << 8) | addr.bytes[2 * i + 1]).toString(16)).join(':');
    return { t: 'prefix', cidr: parseCIDR(`${text}/${len}`)!.cidr };
  });

const addressValueArb = (v6: boolean): fc.Arbitrary<Value> => {
  const ip = v6 ? ipv6Arb : ipv4Arb;
  const item: fc.Arbitrary<Value> = fc.oneof(
    ip.map((a): Value => ({ t: 'ip', ip: a })),
    prefixArb(ip, v6 ? 128 : 32),
  );
  return fc.oneof(item, fc.array(item, { minLength: 1, maxLength: 4 }).map((items): Value => ({ t: 'anonset', items })));
};

const leafExprArb: fc.Arbitrary<Expr> = fc.oneof(
  fc.record({
    t: fc.constant('payload' as const),
    proto: fc.constantFrom('ip', 'ip6', 'th', 'tcp', 'udp', 'sctp') as fc.Arbitrary<'ip'>,
    field: fc.constantFrom('saddr', 'daddr', 'dport') as fc.Arbitrary<'saddr'>,
  }),
  fc.record({ t: fc.constant('meta' as const), key: fc.constantFrom('l4proto', 'mark', 'iifname') as fc.Arbitrary<'mark'> }),
  fc.constantFrom<Expr>({ t: 'ct', key: 'state' }, { t: 'ct', key: 'status' }, { t: 'ct', key: 'direction' }),
  fc.constantFrom<Expr>({ t: 'ct-original', key: 'ip daddr' }, { t: 'ct-original', key: 'ip6 daddr' }, { t: 'ct-original', key: 'proto-dst' }),
  // fast-load's affinity records: the jhash of the destination after NAT.
  fc
    .tuple(fc.constantFrom('ip', 'ip6') as fc.Arbitrary<'ip'>, fc.constantFrom('tcp', 'udp', 'sctp', 'th') as fc.Arbitrary<'tcp'>, fc.integer({ min: 1, max: 0x7fffffff }), fc.integer({ min: 0, max: 0xffffffff }))
    .map(([family, proto, mod, seed]): Expr => ({ t: 'jhash', key: { t: 'concat', parts: [{ t: 'payload', proto: family, field: 'daddr' }, { t: 'payload', proto, field: 'dport' }] }, mod, seed })),
  fc.record({ t: fc.constant('fib' as const), flag: fc.constantFrom('saddr', 'daddr') as fc.Arbitrary<'saddr'>, result: fc.constant('type' as const) }),
  fc.integer({ min: 1, max: 64 }).map((mod): Expr => ({ t: 'numgen', mod })),
  // A constant in a key (fast-load's affinity set): offsets below 2^31, as kproxc writes them.
  fc.integer({ min: 1, max: 0x7fffffff }).map((offset): Expr => ({ t: 'numgen', mod: 1, offset })),
);

const exprArb: fc.Arbitrary<Expr> = fc.oneof(
  { weight: 4, arbitrary: leafExprArb },
  { weight: 1, arbitrary: fc.array(leafExprArb, { minLength: 2, maxLength: 3 }).map((parts): Expr => ({ t: 'concat', parts })) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffffffff }).map((mask): Expr => ({ t: 'and', left: { t: 'meta', key: 'mark' }, mask })) },
);

const verdictArb: fc.Arbitrary<Verdict> = fc.oneof(
  fc.tuple(fc.constantFrom('jump', 'goto') as fc.Arbitrary<'jump'>, nameArb).map(([kind, target]): Verdict => ({ kind, target })),
  fc.constantFrom('drop', 'accept', 'return').map((kind) => ({ kind }) as Verdict),
);

/** A right-hand side that fits the left, as kproxc writes one (and live/checked/json.ts reads one). */
function valueFor(left: Expr): fc.Arbitrary<Value> {
  const ref = nameArb.map((name): Value => ({ t: 'setref', name }));
  switch (left.t) {
    case 'ct':
      if (left.key === 'status') return fc.oneof(fc.constantFrom<Value>({ t: 'sym', s: 'dnat' }, { t: 'sym', s: 'confirmed' }), ref);
      return fc.oneof(fc.constant<Value>({ t: 'sym', s: left.key === 'state' ? 'new' : 'original' }), ref);
    case 'ct-original':
      if (left.key === 'proto-dst') return fc.oneof(fc.integer({ min: 0, max: 65535 }).map((n): Value => ({ t: 'num', n })), ref);
      return fc.oneof(addressValueArb(left.key === 'ip6 daddr'), ref);
    case 'jhash':
      return fc.integer({ min: 0, max: 0x7ffffffe }).map((n): Value => ({ t: 'num', n }));
    case 'fib':
      return fc.oneof(fc.constant<Value>({ t: 'sym', s: 'local' }), ref);
    case 'meta':
      if (left.key === 'l4proto') return fc.oneof(fc.constantFrom('tcp', 'udp', 'sctp').map((s): Value => ({ t: 'sym', s: s as 'tcp' })), ref);
      if (left.key === 'iifname') return fc.oneof(fc.stringMatching(/^[a-z0-9]{1,8}\*?$/).map((s): Value => ({ t: 'str', s })), ref);
      return ref;
    case 'payload':
      if (left.field === 'dport') return fc.oneof(fc.integer({ min: 0, max: 65535 }).map((n): Value => ({ t: 'num', n })), ref);
      if (left.proto === 'ip' || left.proto === 'ip6') return fc.oneof(addressValueArb(left.proto === 'ip6'), ref);
      return ref;
    case 'and':
      return fc.integer({ min: 0, max: 0xffffffff }).map((n): Value => ({ t: 'num', n }));
    default:
      return ref;
  }
}

const matchArb: fc.Arbitrary<Stmt> = exprArb.chain((left) =>
  fc.tuple(fc.constantFrom('==', '!=') as fc.Arbitrary<'=='>, valueFor(left)).map(([op, right]): Stmt => ({ t: 'match', left, op, right })),
);

type StmtOf<K extends Stmt['t']> = Extract<Stmt, { t: K }>;

/**
 * Random statements of each kind, by kind: a kind added to Stmt and missing here fails the
 * type check, so every property test drawing from stmtArb, and the test of every kind
 * through every form (test/unit/stmt-forms.test.ts), covers it.
 */
export const stmtArbs: { [K in Stmt['t']]: fc.Arbitrary<StmtOf<K>> } = {
  match: matchArb as fc.Arbitrary<StmtOf<'match'>>,
  verdict: verdictArb.map((v): StmtOf<'verdict'> => ({ t: 'verdict', v })),
  vmap: fc.tuple(exprArb, nameArb).map(([key, map]): StmtOf<'vmap'> => ({ t: 'vmap', key, map })),
  'numgen-vmap': fc
    .array(verdictArb, { minLength: 1, maxLength: 5 })
    .chain((targets) => fc.integer({ min: 1, max: 64 }).map((mod): StmtOf<'numgen-vmap'> => ({ t: 'numgen-vmap', mod, targets }))),
  'mark-set': fc
    .tuple(fc.constantFrom('or', 'xor') as fc.Arbitrary<'or'>, fc.integer({ min: 0, max: 0xffffffff }))
    .map(([op, value]): StmtOf<'mark-set'> => ({ t: 'mark-set', op, value })),
  masquerade: fc.boolean().map((fullyRandom): StmtOf<'masquerade'> => ({ t: 'masquerade', fullyRandom })),
  dnat: fc.tuple(fc.oneof(ipv4Arb, ipv6Arb), fc.integer({ min: 0, max: 65535 })).map(([ip, port]): StmtOf<'dnat'> => ({ t: 'dnat', ip, port })),
  // One family for every target; mod is one per target as kproxc writes it, or any.
  'numgen-dnat': fc
    .tuple(fc.boolean(), fc.integer({ min: 1, max: 6 }))
    .chain(([v6, n]) =>
      fc.tuple(
        fc.array(fc.tuple(v6 ? ipv6Arb : ipv4Arb, fc.integer({ min: 0, max: 65535 })), { minLength: n, maxLength: n }),
        fc.oneof(fc.constant(n), fc.integer({ min: 1, max: 64 })),
      ),
    )
    .map(([targets, mod]): StmtOf<'numgen-dnat'> => ({ t: 'numgen-dnat', mod, targets: targets.map(([ip, port]) => ({ ip, port })) })),
  // fast-load's form: a constant and a draw as the key, or any key.
  'map-dnat': fc
    .tuple(
      fc.constantFrom('ip', 'ip6') as fc.Arbitrary<'ip'>,
      fc.oneof(
        fc
          .tuple(fc.integer({ min: 0, max: 0x7fffffff }), fc.integer({ min: 1, max: 64 }))
          .map(([c, n]): StmtOf<'map-dnat'>['key'] => ({ t: 'concat', parts: [{ t: 'numgen', mod: 1, offset: c }, { t: 'numgen', mod: n }] })),
        exprArb,
      ),
      nameArb,
    )
    .map(([family, key, map]): StmtOf<'map-dnat'> => ({ t: 'map-dnat', family, key, map })),
  // fast-load's form for endpoints on one port: a draw as the key, or any key.
  'map-addr-dnat': fc
    .tuple(
      fc.oneof(
        fc
          .tuple(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 0, max: 0x7fffffff }))
          .map(([mod, offset]): StmtOf<'map-addr-dnat'>['key'] => ({ t: 'numgen', mod, offset })),
        exprArb,
      ),
      nameArb,
      fc.integer({ min: 0, max: 65535 }),
    )
    .map(([key, map, port]): StmtOf<'map-addr-dnat'> => ({ t: 'map-addr-dnat', key, map, port })),
  update: fc
    .tuple(nameArb, exprArb, fc.option(fc.integer({ min: 1, max: 86400 }), { nil: undefined }))
    .map(([set, key, timeoutSeconds]): StmtOf<'update'> => (timeoutSeconds === undefined ? { t: 'update', set, key } : { t: 'update', set, key, timeoutSeconds })),
  reject: fc.constant<StmtOf<'reject'>>({ t: 'reject' }),
};

/** How often each kind comes up in stmtArb: matches and verdicts most, as in real rules. */
const WEIGHT: Partial<Record<Stmt['t'], number>> = { match: 5, verdict: 3, dnat: 2 };

export const stmtArb: fc.Arbitrary<Stmt> = fc.oneof(
  ...(Object.keys(stmtArbs) as Stmt['t'][]).map((k) => ({ weight: WEIGHT[k] ?? 1, arbitrary: stmtArbs[k] as fc.Arbitrary<Stmt> })),
);

export const stmtsArb = fc.array(stmtArb, { minLength: 1, maxLength: 4 });

/** JSON as nft prints it: `{"key": value, "key": [a, b]}`. */
export function nftSpaced(j: unknown): string {
  if (Array.isArray(j)) return `[${j.map(nftSpaced).join(', ')}]`;
  if (j !== null && typeof j === 'object') {
    return `{${Object.entries(j)
      .map(([k, v]) => `${JSON.stringify(k)}: ${nftSpaced(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(j);
}
