// What a trace found, whatever data plane was walked: the branches a packet can take (a
// load-balancing rule is not resolved to one endpoint, so each endpoint is a branch), each
// with its path and outcome, and the summary over all of them.
import type { TracePacket } from './packet.js';

export type Hook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';

export interface Step {
  /** The netfilter hook (or OVS table) the step happened in; "routing" for the route lookup. */
  hook: Hook | 'routing' | string;
  chain?: string;
  /** The rule as `nft list` would print its body (and comment), when a rule took the step. */
  rule?: string;
  /** What happened, in the user's terms. */
  action: string;
}

export type Verdict = 'dnat' | 'drop' | 'reject' | 'none';

export interface Branch {
  verdict: Verdict;
  /** The DNAT destination, "ip:port" or "[ip]:port", when the branch was DNATed. */
  endpoint?: string;
  masquerade: boolean;
  /** Session-affinity keys the branch wrote (nftables: `update @set { key }`), in the order written. */
  affinity?: { set: string; key: string }[];
  path: Step[];
}

export interface TraceResult {
  packet: TracePacket;
  /** How the packet entered: what the walk started from, in words. */
  origin: string;
  branches: Branch[];
}

export interface Summary {
  verdict: Verdict;
  endpoints: string[];
  masquerade: boolean;
}

/**
 * One verdict for the packet: the branches' common verdict; when they differ, "dnat" if any
 * branch reaches an endpoint (the others are listed with their own verdicts). Masquerade
 * is true when any branch is masqueraded, as kube-proxy's own packet tracer counts it.
 */
export function summarize(r: TraceResult): Summary {
  const verdicts = new Set(r.branches.map((b) => b.verdict));
  const endpoints: string[] = [];
  for (const b of r.branches) if (b.verdict === 'dnat' && b.endpoint && !endpoints.includes(b.endpoint)) endpoints.push(b.endpoint);
  const verdict: Verdict = verdicts.size === 1 ? [...verdicts][0] : endpoints.length > 0 ? 'dnat' : r.branches[0].verdict;
  return { verdict, endpoints, masquerade: r.branches.some((b) => b.masquerade) };
}

/** The steps every branch shares, and what each branch adds after them. */
export function splitPaths(branches: Branch[]): { common: Step[]; rest: Step[][] } {
  let n = 0;
  const first = branches[0]?.path ?? [];
  while (n < first.length && branches.every((b) => b.path[n] === first[n])) n++;
  return { common: first.slice(0, n), rest: branches.map((b) => b.path.slice(n)) };
}
