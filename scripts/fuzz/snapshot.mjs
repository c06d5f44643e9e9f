// Snapshot objects to text, in each form kproxc reads, and the rules every run must keep:
// the judge of property tests and `npm run fuzz`.
import { stringify } from 'yaml';

/** Objects as YAML documents, as a kind: List (kubectl get -o yaml), or as JSON. */
export function serialize(objects, format) {
  switch (format) {
    case 'list':
      return stringify({ apiVersion: 'v1', kind: 'List', items: objects, metadata: { resourceVersion: '' } });
    case 'json':
      return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2) + '\n';
    default:
      return objects.map((o) => stringify(o)).join('---\n');
  }
}

// Every line a successful compile prints: for nft, outside a table's block, an operation on
// our own tables or the opening and closing of one of their blocks (a line inside a block
// starts with a tab, and a block opens only on our tables, so nothing in it can touch
// another table); for ovs-ofctl a flow or group command in the few characters OpenFlow
// matches use.
const OUTPUT_LINE = {
  nftables: /^((add|delete) table (ip|ip6) kube-proxy|table (ip|ip6) kube-proxy \{|\}|add element (ip|ip6) kube-proxy .*)$/,
  ovs: /^(flow|group) (add|delete)( [A-Za-z0-9_=,.:/()>+[\] -]*)?$/,
};

/** The first line of the output that is not ours, if there is one. */
function lineNotOurs(stdout, backend) {
  let inBlock = false;
  for (const l of stdout.split('\n')) {
    if (l === '') continue;
    if (backend === 'nftables' && inBlock && l.startsWith('\t')) continue;
    if (!OUTPUT_LINE[backend].test(l)) return l;
    if (backend === 'nftables') inBlock = l.endsWith('{') ? true : l === '}' ? false : inBlock;
  }
  return undefined;
}
// A diagnostic: FILE:LINE:COL: ... (the input comes on standard input).
const DIAGNOSTIC = /^<stdin>:(\d+):(\d+): /;

/**
 * What a run of `kproxc compile -` (with `backend`) on `text` did wrong, or null. Exit 0 must print a ruleset
 * that only touches our tables and warn at most; exit 2 must print nothing on standard output
 * and one positioned diagnostic per line; anything else (70, a throw) is a bug.
 */
export function judge(text, r, backend = 'nftables') {
  if (r.threw) return `threw: ${r.threw}`;
  if (/\n\s+at /.test(r.stderr)) return 'stack trace on standard error';
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  const textLines = text.split(/\r\n|\r|\n/).length;
  for (const l of lines) {
    const m = DIAGNOSTIC.exec(l);
    if (!m) return `diagnostic without a position: ${l.slice(0, 200)}`;
    const line = Number(m[1]);
    if (line < 1 || line > textLines + 1 || Number(m[2]) < 1) return `position outside the input: ${l.slice(0, 200)}`;
  }
  if (r.code === 0) {
    if (lines.some((l) => !/: warning: /.test(l))) return 'exit 0 with an error on standard error';
    if (r.stdout === '') return 'exit 0 with no output';
    const bad = lineNotOurs(r.stdout, backend);
    if (bad !== undefined) return `output line that is not ours: ${bad.slice(0, 200)}`;
    if (!r.stdout.endsWith('\n')) return 'output does not end with a newline';
    return null;
  }
  if (r.code === 2) {
    if (r.stdout !== '') return 'exit 2 with output on standard output';
    if (!lines.some((l) => !/: warning: /.test(l))) return 'exit 2 without an error diagnostic';
    return null;
  }
  return `exit ${r.code}: ${lines.join(' | ').slice(0, 300)}`;
}
