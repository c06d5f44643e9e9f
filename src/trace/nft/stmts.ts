// Statements, compiled once per rule into functions over the packet state. As for
// expressions, dispatch is a table keyed by every statement kind of expr.ts, and an unknown
// kind fails the compile of its rule.
import { InternalError } from '../../diag/diagnostic.js';
import { formatIP, ipEquals, type IP } from '../../net/ip.js';
import type { Expr, Stmt, Verdict } from '../../nft/expr.js';
import type { Element } from '../../nft/objects.js';
import { markHex, verdictText } from '../../nft/expr-text.js';
import { hostPort } from '../packet.js';
import type { NodeEnv, PacketState } from './state.js';
import { compileExpr, compileValue, ctStatusFlags, datumText, type SetIndex } from './values.js';

export type StmtResult =
  /** Carry on with the rule's next statement. */
  | { t: 'next'; action?: string }
  /** The rule stops here without a verdict: a match failed or a map has no element. */
  | { t: 'stop'; action?: string }
  | { t: 'verdict'; v: Verdict; action?: string }
  /** Each branch is a way the packet may go, on its own copy of the packet; all of them are followed. */
  | { t: 'fork'; branches: ForkBranch[]; action: string }
  /**
   * A random draw the rule may pass or fail (`numgen random mod K 0`): both are followed,
   * one branch carrying on with the rule's next statement, the other with the next rule.
   */
  | { t: 'split'; action: string }
  /** NAT statements accept the packet for this hook; reject ends it. */
  | EndResult;

type EndResult = { t: 'end'; end: 'accept' | 'reject'; action: string };

/** What one branch of a fork does to its copy of the packet; the action says which branch it is. */
export type ForkBranch = (s: PacketState) => { t: 'verdict'; v: Verdict; action: string } | EndResult;

export type StmtFn = (s: PacketState, env: NodeEnv) => StmtResult;

export interface TableIndex extends SetIndex {
  element(map: string, key: string): Element | undefined;
}

type StmtCompilers = { [K in Stmt['t']]: (st: Extract<Stmt, { t: K }>, t: TableIndex) => StmtFn };

/**
 * `numgen random mod K [offset C] N` (C <= N < C+K, K > 1): true for one draw in K. The walk
 * does not pick: the rule forks into a branch where the draw matched and one where it did
 * not, so a chain of such rules yields each of its targets once, as a `numgen ... vmap` does.
 */
function compileRandomMatch(st: Extract<Stmt, { t: 'match' }>): StmtFn | undefined {
  if (st.left.t !== 'numgen' || st.left.mod <= 1) return undefined;
  const { mod } = st.left;
  const offset = st.left.offset ?? 0;
  if (st.op !== '==' || st.right.t !== 'num' || st.right.n < offset || st.right.n >= offset + mod) {
    throw new InternalError(`numgen random mod ${mod} can only be traced compared with == to one of its ${mod} values`);
  }
  const action = `numgen random mod ${mod} drew ${st.right.n} (1 draw in ${mod}); the other draws go on with the next rule`;
  return () => ({ t: 'split', action });
}

/** `ct status F` (the flag set) or `ct status ! F` (clear): a test of one flag of the bitmask. */
function compileFlagTest(st: Extract<Stmt, { t: 'match' }>): StmtFn | undefined {
  if (st.left.t !== 'ct' || st.left.key !== 'status') return undefined;
  if (st.right.t !== 'sym') throw new InternalError('ct status can only be traced tested for one flag');
  const flag = st.right.s;
  const wanted = st.op === '==';
  return (s) => (ctStatusFlags(s).includes(flag) === wanted ? { t: 'next' } : { t: 'stop' });
}

const STMTS: StmtCompilers = {
  match: (st, t) => {
    const special = compileRandomMatch(st) ?? compileFlagTest(st);
    if (special) return special;
    const left = compileExpr(st.left);
    const right = compileValue(st.right, t);
    return (s, env) => {
      const d = left(s, env);
      if (d === null) return { t: 'stop' };
      return right(d, s) === (st.op === '==') ? { t: 'next' } : { t: 'stop' };
    };
  },
  vmap: (st, t) => {
    if (st.key.t === 'numgen' && st.key.mod > 1) return compileDrawVmap(st, st.key, t);
    const key = compileExpr(st.key);
    return (s, env) => {
      const d = key(s, env);
      if (d === null) return { t: 'stop' };
      const k = datumText(d);
      const e = t.element(st.map, k);
      if (!e?.value) return { t: 'stop', action: `${st.map} has no element ${k}` };
      return { t: 'verdict', v: e.value, action: `matched ${st.map} element ${k} → ${verdictText(e.value)}` };
    };
  },
  'numgen-vmap': (st) => {
    const branches = st.targets.map((v): ForkBranch => () => ({ t: 'verdict', v, action: verdictText(v) }));
    return () =>
      st.targets.length === 1
        ? { t: 'verdict', v: st.targets[0], action: `numgen random mod 1: the only endpoint → ${verdictText(st.targets[0])}` }
        : { t: 'fork', branches, action: `numgen random mod ${st.mod} picks one of ${st.targets.length}: every branch is followed` };
  },
  verdict: (st) => () => ({ t: 'verdict', v: st.v }),
  'mark-set': (st) => (s) => {
    s.mark = (st.op === 'or' ? s.mark | st.value : s.mark ^ st.value) >>> 0;
    return { t: 'next', action: `mark set mark ${st.op} ${markHex(st.value)}: mark is ${markHex(s.mark)}` };
  },
  masquerade: (st) => (s) => {
    s.masqueraded = true;
    return { t: 'end', end: 'accept', action: `masquerade${st.fullyRandom ? ' fully-random' : ''}: the source becomes the outgoing interface's address` };
  },
  dnat: (st) => (s) => applyDnat(s, st.ip, st.port),
  'numgen-dnat': (st) => {
    // One branch per element: kproxc's map has one per draw (makeRule checks it).
    if (st.targets.length !== st.mod) throw new InternalError(`numgen random mod ${st.mod} with ${st.targets.length} targets cannot be traced draw by draw`);
    if (st.targets.length === 1) {
      const [only] = st.targets;
      return (s) => ({ ...applyDnat(s, only.ip, only.port), action: `numgen random mod 1: the only endpoint → dnat to ${hostPort(only.ip, only.port)}` });
    }
    const branches = st.targets.map((x): ForkBranch => (s) => applyDnat(s, x.ip, x.port));
    return () => ({ t: 'fork', branches, action: `numgen random mod ${st.mod} picks one of ${st.targets.length}: every branch is followed` });
  },
  'map-dnat': (st, t) => compileMapDnat(st, t),
  'map-addr-dnat': (st, t) => compileMapDnat(st, t),
  update: (st) => {
    const key = compileExpr(st.key);
    return (s, env) => {
      const d = key(s, env);
      if (d === null) throw new InternalError(`update @${st.set} reads a field the packet lacks`);
      const k = datumText(d);
      const added = s.added.get(st.set) ?? new Set<string>();
      added.add(k);
      s.added.set(st.set, added);
      const timeout = st.timeoutSeconds !== undefined ? ` for ${st.timeoutSeconds}s` : '';
      return { t: 'next', action: `update @${st.set}: ${k} is remembered${timeout} (session affinity)` };
    };
  },
  reject: () => () => ({ t: 'end', end: 'reject', action: 'reject' }),
};

/** The values `numgen random mod N [offset B]` draws, B .. B+N-1, as element keys. */
const drawKeys = (draw: Extract<Expr, { t: 'numgen' }>): string[] => Array.from({ length: draw.mod }, (_, i) => String((draw.offset ?? 0) + i));

/**
 * `numgen random mod N [offset B] vmap @M`: the draw forks into one branch per value, each
 * taking the verdict of M's element for it (fast-load's draw among a Service port's
 * endpoint chains). A draw without an element ends the rule, as a failed lookup does.
 */
function compileDrawVmap(st: Extract<Stmt, { t: 'vmap' }>, draw: Extract<Expr, { t: 'numgen' }>, t: TableIndex): StmtFn {
  const keys = drawKeys(draw);
  return () => {
    const verdicts = keys.map((k) => t.element(st.map, k)?.value);
    if (verdicts.some((v) => v === undefined)) return { t: 'stop', action: `${st.map} lacks an element for a draw of numgen random mod ${draw.mod}: the rule ends there` };
    const branches = verdicts.map((v): ForkBranch => () => ({ t: 'verdict', v: v!, action: verdictText(v!) }));
    return { t: 'fork', branches, action: `numgen random mod ${draw.mod} picks one of ${st.map}'s ${keys.length} elements: every branch is followed` };
  };
}

/**
 * `dnat ... to KEY . numgen random mod N map @M`: the key's other parts are read from the
 * packet (fast-load: constants), and the draw forks into one branch per value of the
 * numgen, each DNATed to the element it finds (a draw with no element ends the rule, as
 * a failed map lookup does in the kernel). A key without a draw is one lookup. The map's
 * elements hold an address and a port, or (`dnat to KEY map @M:P`) an address, the port
 * being the statement's.
 */
function compileMapDnat(st: Extract<Stmt, { t: 'map-dnat' | 'map-addr-dnat' }>, t: TableIndex): StmtFn {
  const fixedPort = st.t === 'map-addr-dnat' ? st.port : undefined;
  const parts = st.key.t === 'concat' ? st.key.parts : [st.key];
  const last = parts[parts.length - 1];
  const draw = last.t === 'numgen' && last.mod > 1 ? last : undefined;
  const fixed = (draw ? parts.slice(0, -1) : parts).map(compileExpr);
  const values = draw ? drawKeys(draw) : [''];
  return (s, env) => {
    const ds = fixed.map((f) => f(s, env));
    if (ds.some((d) => d === null)) return { t: 'stop' };
    const prefix = ds.map((d) => datumText(d!)).join(' . ');
    const found: { ip: IP; port: number; key: string }[] = [];
    for (const v of values) {
      const key = draw ? (prefix ? `${prefix} . ${v}` : v) : prefix;
      const e = t.element(st.map, key);
      const [ip, port, ...rest] = e?.data ?? [];
      if (fixedPort !== undefined) {
        if (ip?.t === 'ip' && port === undefined) found.push({ ip: ip.ip, port: fixedPort, key });
      } else if (ip?.t === 'ip' && port?.t === 'port' && rest.length === 0) found.push({ ip: ip.ip, port: port.n, key });
    }
    const of = prefix ? ` for ${prefix}` : '';
    if (found.length < values.length) return { t: 'stop', action: `${st.map} lacks an element for a draw${of}: the rule ends there` };
    if (found.length === 1) {
      const [only] = found;
      return { ...applyDnat(s, only.ip, only.port), action: `${st.map} element ${only.key} → dnat to ${hostPort(only.ip, only.port)}` };
    }
    const branches = found.map((x): ForkBranch => (b) => applyDnat(b, x.ip, x.port));
    return { t: 'fork', branches, action: `numgen random mod ${values.length} picks one of ${st.map}'s ${found.length} elements${of}: every branch is followed` };
  };
}

/**
 * Destination NAT of the packet: its destination address and port replaced, the endpoint
 * recorded, and the connection's DNAT status bit set when that changed them (the kernel
 * sets IPS_DST_NAT only for a translation that changes the tuple). It accepts the packet
 * for this hook.
 */
function applyDnat(s: PacketState, to: IP, port: number): EndResult {
  if (to.family !== s.daddr.family) throw new InternalError(`dnat to ${formatIP(to)} in a table of the other family`);
  if (!ipEquals(s.daddr, to) || s.dport !== port) s.ctStatusDnat = true;
  s.daddr = to;
  s.dport = port;
  s.dnat = { ip: to, port };
  return { t: 'end', end: 'accept', action: `dnat to ${hostPort(to, port)}` };
}

export function compileStmt(st: Stmt, t: TableIndex): StmtFn {
  const c = (STMTS as Record<string, ((st: Stmt, t: TableIndex) => StmtFn) | undefined>)[st.t];
  if (!c) throw new InternalError(`the tracer cannot evaluate the statement kind ${JSON.stringify(st.t)}`);
  return c(st, t);
}

/** Statement kinds the tracer evaluates (every kind of expr.ts; the type table enforces it). */
export const TRACED_STMT_KINDS = Object.keys(STMTS) as Stmt['t'][];
