// What a statement names: the chains it jumps to and the sets it reads or writes, so that
// the table builder can refuse a rule that names what the table lacks, and the diff can
// order its operations (a chain or set is made before, and removed after, what names it).
import { assertNever } from '../diag/diagnostic.js';
import type { Expr, Stmt, Value } from './expr.js';

/**
 * Calls back with every chain and set a statement refers to; allocates nothing. Every kind
 * has its case, even one that names nothing: a kind added to Stmt must say what it names,
 * or the builder would let a rule name a chain or set the table lacks.
 */
export function forEachReference(s: Stmt, chain: (name: string) => void, set: (name: string) => void): void {
  switch (s.t) {
    case 'match':
      exprSetRefs(s.left, set);
      valueSetRefs(s.right, set);
      return;
    case 'vmap':
    case 'map-dnat':
    case 'map-addr-dnat':
      exprSetRefs(s.key, set);
      set(s.map);
      return;
    case 'numgen-vmap':
      for (const v of s.targets) if ('target' in v) chain(v.target);
      return;
    case 'verdict':
      if ('target' in s.v) chain(s.v.target);
      return;
    case 'update':
      exprSetRefs(s.key, set);
      set(s.set);
      return;
    case 'mark-set':
    case 'masquerade':
    case 'dnat':
    case 'numgen-dnat':
    case 'reject':
      return;
    default:
      assertNever(s, 'statement kind');
  }
}

/**
 * The sets an expression names. No kind names one today; the cases make a kind added to
 * Expr say whether it does. Walked for every expression a statement holds, for the same reason.
 */
function exprSetRefs(e: Expr, set: (name: string) => void): void {
  switch (e.t) {
    case 'concat':
      for (const p of e.parts) exprSetRefs(p, set);
      return;
    case 'and':
      exprSetRefs(e.left, set);
      return;
    case 'jhash':
      exprSetRefs(e.key, set);
      return;
    case 'payload':
    case 'meta':
    case 'ct':
    case 'ct-original':
    case 'fib':
    case 'numgen':
      return;
    default:
      assertNever(e, 'expression kind');
  }
}

function valueSetRefs(v: Value, set: (name: string) => void): void {
  switch (v.t) {
    case 'setref':
      set(v.name);
      return;
    case 'anonset':
      for (const i of v.items) valueSetRefs(i, set);
      return;
    case 'ip':
    case 'prefix':
    case 'num':
    case 'sym':
    case 'str':
      return;
    default:
      assertNever(v, 'value kind');
  }
}

/** Chains and sets a statement refers to. */
export function stmtReferences(s: Stmt): { chains: string[]; sets: string[] } {
  const refs: { chains: string[]; sets: string[] } = { chains: [], sets: [] };
  forEachReference(
    s,
    (c) => refs.chains.push(c),
    (x) => refs.sets.push(x),
  );
  return refs;
}
