// Chains run as the kernel runs them: rules in order, statements left to right until one
// fails; `jump` comes back after the jumping rule, `goto` does not (when the target ends,
// the chain that jumped to the goto's chain carries on), `return` and the end of a chain
// go back to the caller, and the end of a base chain is its policy (accept). A load-balancing
// map forks the packet: every branch runs on to its own end; so does a random draw
// (`numgen random mod K 0 goto ...`): the branch where it matched takes the rule's verdict,
// the other goes on with the chain's next rule.
import { InternalError } from '../../diag/diagnostic.js';
import type { Verdict } from '../../nft/expr.js';
import type { CompiledRule, Program } from './program.js';
import { forkState, record, type NodeEnv, type PacketState } from './state.js';
import type { StmtResult } from './stmts.js';

export type ChainEnd = 'continue' | 'accept' | 'drop' | 'reject';

export interface ChainOutcome {
  state: PacketState;
  end: ChainEnd;
}

/** The kernel's jump stack depth (NFT_JUMP_STACK_SIZE); deeper means a loop, which is our bug. */
const MAX_DEPTH = 16;

/** Where a rule's statements stopped: the result, and the statement that gave it. */
interface RuleRun {
  out: StmtResult;
  at: number;
  /** What the statements before a split did, to record with the branch's outcome. */
  actions: string[];
}

/**
 * Runs a rule's statements from statement `from`; records a step when the rule did
 * something. A random draw (split) stops the run; the caller follows both outcomes.
 */
function runRule(chain: string, rule: CompiledRule, s: PacketState, env: NodeEnv, from = 0, prefix: string[] = []): RuleRun {
  const actions = [...prefix];
  let out: StmtResult = { t: 'next' };
  let at = from;
  for (; at < rule.stmts.length; at++) {
    out = rule.stmts[at](s, env);
    if (out.t === 'split') return { out, at, actions };
    if (out.action) actions.push(out.action);
    if (out.t !== 'next') break;
  }
  if (out.t === 'verdict' && actions.length === 0) actions.push(rule.text);
  if (actions.length > 0) record(s, { chain, rule: rule.text, action: actions.join('; ') });
  return { out, at, actions: [] };
}

function applyVerdict(p: Program, env: NodeEnv, chain: string, at: number, s: PacketState, v: Verdict, depth: number): ChainOutcome[] {
  switch (v.kind) {
    case 'accept':
    case 'drop':
      return [{ state: s, end: v.kind }];
    case 'return':
      return [{ state: s, end: 'continue' }];
    case 'jump':
      return runFrom(p, env, v.target, 0, s, depth + 1).flatMap((o) =>
        o.end === 'continue' ? runFrom(p, env, chain, at + 1, o.state, depth) : [o],
      );
    case 'goto':
      return runFrom(p, env, v.target, 0, s, depth + 1);
  }
}

/** What a rule's result makes of the chain: carry on with rule i+1, or the chain's outcomes. */
function settle(p: Program, env: NodeEnv, chain: string, i: number, s: PacketState, run: RuleRun, depth: number): ChainOutcome[] | undefined {
  const { out } = run;
  switch (out.t) {
    case 'next':
    case 'stop':
      return undefined;
    case 'end':
      return [{ state: s, end: out.end }];
    case 'verdict':
      return applyVerdict(p, env, chain, i, s, out.v, depth);
    case 'fork':
      return out.branches.flatMap((branch, k) => {
        const b = forkState(s);
        const taken = branch(b);
        record(b, { chain, action: `branch ${k + 1} of ${out.branches.length}: ${taken.action}` });
        return taken.t === 'verdict' ? applyVerdict(p, env, chain, i, b, taken.v, depth) : [{ state: b, end: taken.end }];
      });
    case 'split': {
      // The draw matched: the rule's remaining statements run on a copy. It did not: the
      // packet goes on with the next rule, as if the rule had not matched.
      const rule = p.rules(chain)[i];
      const taken = forkState(s);
      const rest = runRule(chain, rule, taken, env, run.at + 1, [...run.actions, out.action]);
      const first = settle(p, env, chain, i, taken, rest, depth) ?? runFrom(p, env, chain, i + 1, taken, depth);
      if (run.actions.length > 0) record(s, { chain, rule: rule.text, action: run.actions.join('; ') });
      return [...first, ...runFrom(p, env, chain, i + 1, s, depth)];
    }
  }
}

function runFrom(p: Program, env: NodeEnv, chain: string, from: number, s: PacketState, depth: number): ChainOutcome[] {
  if (depth > MAX_DEPTH) throw new InternalError(`chains nest deeper than ${MAX_DEPTH} at ${chain}: a loop`);
  const rules = p.rules(chain);
  for (let i = from; i < rules.length; i++) {
    const outcomes = settle(p, env, chain, i, s, runRule(chain, rules[i], s, env), depth);
    if (outcomes) return outcomes;
  }
  return [{ state: s, end: 'continue' }];
}

/** Runs a chain from its first rule; "continue" means it ended without a final verdict. */
export function runChain(p: Program, env: NodeEnv, chain: string, s: PacketState): ChainOutcome[] {
  return runFrom(p, env, chain, 0, s, 0);
}
