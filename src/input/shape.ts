// Limits on the shape of a parsed document, checked without recursion so that no input
// can exhaust the stack: composing YAML recurses once per nesting level, and a stack
// overflow inside V8's regular-expression compiler aborts the process instead of
// throwing (seen with 100,000 nested "[").
import type { CST } from 'yaml';

type Token = CST.Token;

/** Far deeper than any Kubernetes object (managedFields reach about 20). */
export const MAX_NESTING = 100;

function isCollectionToken(t: Token): t is Extract<Token, { items: unknown[] }> {
  return t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection';
}

/** The offset of the first collection nested more than MAX_NESTING deep, or null. */
export function nestingProblem(tokens: Token[]): number | null {
  const stack: [Token | undefined, number][] = tokens.map((t) => [t, 0]);
  while (stack.length > 0) {
    const [t, depth] = stack.pop()!;
    if (!t) continue;
    if (t.type === 'document') stack.push([t.value, depth]);
    else if (isCollectionToken(t)) {
      if (depth + 1 > MAX_NESTING) return t.offset;
      for (const item of t.items as { key?: Token; value?: Token }[]) {
        stack.push([item.key, depth + 1], [item.value, depth + 1]);
      }
    }
  }
  return null;
}

/**
 * Aliases can make a value deeper than its text, or (an alias inside its own anchor) make
 * it cyclic; either is refused. Values shared through aliases are walked once.
 */
export function valueShapeProblem(value: unknown): string | null {
  const done = new Set<object>();
  const onPath = new Set<object>();
  // Explicit stack of [value, depth, entered]: entered marks the second visit, after children.
  const stack: [unknown, number, boolean][] = [[value, 0, false]];
  while (stack.length > 0) {
    const [v, depth, entered] = stack.pop()!;
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    if (entered) {
      onPath.delete(v);
      done.add(v);
      continue;
    }
    if (onPath.has(v)) return 'an alias refers to a value that contains it (a cycle)';
    if (done.has(v)) continue;
    if (depth >= MAX_NESTING) return `nested more than ${MAX_NESTING} levels deep once aliases are expanded`;
    onPath.add(v);
    stack.push([v, depth, true]);
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) stack.push([c, depth + 1, false]);
  }
  return null;
}
