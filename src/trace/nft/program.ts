// A compiled table made executable: every rule of every chain compiled up front (so a rule
// form the tracer cannot evaluate stops the trace before it starts, wherever the rule is),
// elements indexed by key, base chains grouped by hook in priority order.
import { InternalError } from '../../diag/diagnostic.js';
import { ruleStmts, type BaseChainSpec, type Element, type Hook } from '../../nft/objects.js';
import type { Expr, Stmt } from '../../nft/expr.js';
import { keyString, type TableContents } from '../../nft/ruleset.js';
import { ruleBodyText } from '../../nft/text.js';
import { hostPort } from '../packet.js';
import type { PacketState } from './state.js';
import { compileStmt, type StmtFn, type TableIndex } from './stmts.js';
import { compileExpr, type ExprFn } from './values.js';

export interface CompiledRule {
  /** The rule as nft lists it: body, then comment. */
  text: string;
  stmts: StmtFn[];
}

export interface BaseChain {
  name: string;
  spec: BaseChainSpec;
}

/** An `update @set { key }` that goes with a DNAT to an endpoint: what a connection through it writes. */
export interface AffinityWriter {
  set: string;
  key: ExprFn;
}

export interface Program {
  family: 'ip' | 'ip6';
  table: string;
  rules(chain: string): CompiledRule[];
  /** The updates that go with every DNAT to the endpoint ("ip:port"): of its endpoint chain, or of the same rule. */
  affinityWriters(endpoint: string): AffinityWriter[];
  /** Base chains on a hook, in the order the kernel runs them (priority, lowest first). */
  baseChains(hook: Hook): BaseChain[];
}

function tableIndex(t: TableContents): TableIndex {
  const elements = new Map<string, Map<string, Element>>();
  for (const s of t.sets) {
    // Elements are matched by exact key; a range or prefix set would need interval lookup.
    if (s.set.flags?.includes('interval')) throw new InternalError(`the tracer cannot look up the interval set ${s.set.name}`);
    elements.set(s.set.name, new Map(s.elements.map((e) => [keyString(e.key), e])));
  }
  const of = (name: string) => {
    const m = elements.get(name);
    if (!m) throw new InternalError(`rule refers to missing set ${name}`);
    return m;
  };
  return {
    element: (map, key) => of(map).get(key),
    has: (set: string, key: string, s: PacketState) => of(set).has(key) || (s.added.get(set)?.has(key) ?? false) || (s.before?.get(set)?.has(key) ?? false),
  };
}

export function compileProgram(t: TableContents): Program {
  const index = tableIndex(t);
  const chains = new Map<string, CompiledRule[]>();
  for (const c of t.chains) {
    chains.set(
      c.chain.name,
      c.rules.map((r) => ({
        text: r.comment !== undefined ? `${ruleBodyText(ruleStmts(r))} comment "${r.comment}"` : ruleBodyText(ruleStmts(r)),
        stmts: ruleStmts(r).map((st) => compileStmt(st, index)),
      })),
    );
  }
  const writers = affinityWriters(t);
  const bases = t.chains
    .filter((c) => c.chain.base)
    .map((c) => ({ name: c.chain.name, spec: c.chain.base! }))
    .sort((a, b) => a.spec.priority - b.spec.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    family: t.table.family,
    table: t.table.name,
    rules: (name) => {
      const rules = chains.get(name);
      if (!rules) throw new InternalError(`jump to missing chain ${name}`);
      return rules;
    },
    baseChains: (hook) => bases.filter((b) => b.spec.hook === hook),
    affinityWriters: (endpoint) => writers.get(endpoint) ?? [],
  };
}

/**
 * What a connection DNATed to each endpoint wrote into the affinity sets: the `update`s of a
 * rule that DNATs (update and DNAT in one rule), else those of a chain that DNATs
 * (kube-proxy's endpoint chains: an update rule, then the DNAT rule). fast-load's lookups
 * that DNAT (`KEY @affinity ... dnat to E`) are written after NAT, by a recording chain that
 * computes the same KEY from the connection (the client, the Service port's constant, the
 * kernel's jhash of E): the lookup's own key is what an earlier connection to E left.
 */
function affinityWriters(t: TableContents): Map<string, AffinityWriter[]> {
  const writers = new Map<string, AffinityWriter[]>();
  const add = (stmts: Stmt[], updates: AffinityWriter[]) => {
    for (const st of stmts) {
      const targets = st.t === 'dnat' ? [st] : st.t === 'numgen-dnat' ? st.targets : [];
      for (const x of targets) {
        const k = hostPort(x.ip, x.port);
        writers.set(k, [...(writers.get(k) ?? []), ...updates]);
      }
    }
  };
  const updatesOf = (stmts: Stmt[]) => stmts.flatMap((st) => (st.t === 'update' ? [{ set: st.set, key: compileExpr(st.key) }] : []));
  const dnats = (stmts: Stmt[]) => stmts.some((st) => st.t === 'dnat' || st.t === 'numgen-dnat');
  for (const c of t.chains) {
    const rules = c.rules.map((r) => ruleStmts(r));
    const inRule = rules.filter((stmts) => stmts.some((st) => st.t === 'update') && dnats(stmts));
    const lookups = rules.flatMap((stmts) => {
      const m = !stmts.some((st) => st.t === 'update') && dnats(stmts) ? clientLookup(stmts) : undefined;
      return m ? [{ stmts, ...m }] : [];
    });
    for (const l of lookups) add(l.stmts, [{ set: l.set, key: compileExpr(l.key) }]);
    if (inRule.length > 0) {
      // A rule's update goes with its own DNAT; the same endpoint's rules write the same key once.
      for (const stmts of inRule) add(stmts, updatesOf(stmts));
      continue;
    }
    if (lookups.length > 0) continue;
    const stmts = rules.flat();
    const updates = updatesOf(stmts);
    if (updates.length > 0) add(stmts, updates);
  }
  return writers;
}

/** A rule's lookup of the client in a named set (its key reads the source address), if it has one. */
function clientLookup(stmts: Stmt[]): { set: string; key: Expr } | undefined {
  for (const st of stmts) {
    if (st.t !== 'match' || st.op !== '==' || st.right.t !== 'setref') continue;
    const parts = st.left.t === 'concat' ? st.left.parts : [st.left];
    if (parts.some((p) => p.t === 'payload' && p.field === 'saddr')) return { set: st.right.name, key: st.left };
  }
  return undefined;
}
