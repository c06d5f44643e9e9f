// Trace results for people (the path, step by step, then the outcome) and for programs (one
// JSON object per packet, one per line).
import { packetJson, packetText } from './packet.js';
import { splitPaths, summarize, type Branch, type Step, type TraceResult } from './result.js';

function stepLine(s: Step, indent: string): string {
  const where = s.chain ? `[${s.hook}] ${s.chain}:` : `[${s.hook}]`;
  const lines = [`${indent}${where} ${s.action}`];
  // The rule itself, when the action does not already spell it out.
  if (s.rule !== undefined && !s.action.includes(s.rule)) lines.push(`${indent}    rule: ${s.rule}`);
  return lines.join('\n');
}

function branchOutcome(b: Branch): string {
  const what = b.verdict === 'dnat' ? `dnat to ${b.endpoint}` : b.verdict === 'none' ? 'no Service rule handled it' : b.verdict;
  return `${what}${b.masquerade ? ', masqueraded' : ''}`;
}

export function traceText(r: TraceResult): string {
  const out: string[] = [`packet ${packetText(r.packet)}`, `  ${r.origin}`];
  const { common, rest } = splitPaths(r.branches);
  for (const s of common) out.push(stepLine(s, '  '));
  if (r.branches.length > 1) {
    r.branches.forEach((b, i) => {
      out.push(`  branch ${i + 1} of ${r.branches.length}:`);
      for (const s of rest[i]) out.push(stepLine(s, '    '));
      out.push(`    => ${branchOutcome(b)}`);
    });
  } else {
    for (const s of rest[0] ?? []) out.push(stepLine(s, '  '));
  }
  const sum = summarize(r);
  const endpoints = sum.endpoints.length ? ` ${sum.endpoints.join(', ')}` : '';
  out.push(`verdict: ${sum.verdict}${endpoints}; masquerade: ${sum.masquerade ? 'yes' : 'no'}`);
  return out.join('\n') + '\n';
}

const stepJson = (s: Step) => ({ hook: s.hook, ...(s.chain !== undefined ? { chain: s.chain } : {}), ...(s.rule !== undefined ? { rule: s.rule } : {}), action: s.action });

export function traceJson(r: TraceResult): string {
  const sum = summarize(r);
  const { common, rest } = splitPaths(r.branches);
  const obj = {
    packet: packetJson(r.packet),
    verdict: sum.verdict,
    endpoints: sum.endpoints,
    masquerade: sum.masquerade,
    origin: r.origin,
    path: common.map(stepJson),
    branches: r.branches.map((b, i) => ({
      verdict: b.verdict,
      ...(b.endpoint !== undefined ? { endpoint: b.endpoint } : {}),
      masquerade: b.masquerade,
      ...(b.affinity !== undefined ? { affinity: b.affinity } : {}),
      path: rest[i].map(stepJson),
    })),
  };
  return JSON.stringify(obj) + '\n';
}
