// Mutations of a valid snapshot into bad or hostile input: a field gets a hostile string,
// a value of the wrong type, an out-of-range number or a bad IP, or goes missing; an
// object is duplicated; or the text itself is truncated, cut or sprinkled with random
// bytes. Some mutations leave the snapshot valid; the judge accepts either outcome but
// checks that it is handled right.
import fc from 'fast-check';
import { serialize } from './snapshot.mjs';

// Characters and strings that mean something to nft, ovs-ofctl, YAML, JSON or a terminal.
export const HOSTILE = [
  '"', "'", ';', '{', '}', '\n', '\r', '\t', '\0', '#', '$', '@', '*', '\\', ' ', '/', ':', ',', '&', '|', '`',
  '"; flush ruleset; "',
  '} ; add table ip evil { }',
  '\nflush ruleset\n',
  'x" ; delete table ip kube-proxy ; "',
  'accept ; }',
  ')',
  '\u2028',
  '\u001b[31m',
  'é',
  '\u{1F600}',
  '\uFEFF',
  'A'.repeat(300),
  'a'.repeat(64),
  '-a',
  'a-',
  'UPPER',
  '',
  ' ',
  'None',
  'null',
  '0',
  '--',
  '..',
  'a..b',
];

const WRONG_TYPES = [0, 1, -1, 3.5, true, false, null, [], {}, ['a'], { a: 1 }, [[[]]], 'text'];
const NUMBERS = [-1, 0, 1, 65535, 65536, 70000, 86400, 86401, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, 1e300, -0, 31, 32, 255];
const BAD_IPS = [
  '1.2.3.256', '01.2.3.4', '1.2.3', '1.2.3.4.5', '1.2.3.4/24', '::ffff:1.2.3.4', 'FD00::1', 'fd00::0:1', 'fd00:0:0:0:0:0:0:1',
  '127.0.0.1', '0.0.0.0', '::', '::1', '169.254.169.254', 'fe80::1', '224.0.0.1', 'ff02::1', '10.0.0.0/33', '10.0.0.1/8',
  ' 10.0.0.1', '10.0.0.1 ', '10.0.0.1\n', 'fd00::1/129', '1.2.3.4/08', '2001:db8::1', '10.180.0.1', 'fd00:10:180::1',
  '1.2.3.4, 5.6.7.8', '10.0.0.0/8,10.1.0.0/16', 'primary', '0.0.0.0/0',
];

/** Every path in the objects, to containers and to leaves, object keys included. */
function paths(v, prefix = [], out = []) {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) paths(v[k], [...prefix, k], out);
  return out;
}

function setAt(root, path, value) {
  if (path.length === 0) return value;
  let o = root;
  for (const k of path.slice(0, -1)) o = o[k];
  o[path[path.length - 1]] = value;
  return root;
}

function deleteAt(root, path) {
  if (path.length === 0) return root;
  let o = root;
  for (const k of path.slice(0, -1)) o = o[k];
  const last = path[path.length - 1];
  if (Array.isArray(o)) o.splice(last, 1);
  else delete o[last];
  return root;
}

function getAt(root, path) {
  let o = root;
  for (const k of path) o = o[k];
  return o;
}

const pick = (xs, n) => xs[n % xs.length];

const TREE_OPS = ['hostile', 'hostile-affix', 'wrong-type', 'number', 'bad-ip', 'delete', 'duplicate-object', 'rename-key', 'add-key'];
const TEXT_OPS = ['truncate', 'random-bytes', 'replace-byte', 'delete-range', 'inject-yaml', 'insert-hostile'];

/** A mutation as plain numbers, so fast-check can generate, shrink and print it. */
export const mutationArb = fc.record({
  op: fc.constantFrom(...TREE_OPS, ...TREE_OPS, ...TEXT_OPS),
  path: fc.nat(),
  value: fc.nat(),
  pos: fc.nat(),
  bytes: fc.uint8Array({ minLength: 1, maxLength: 12 }),
});

/** The text of `objects` (in `format`) with mutation `m` applied. */
export function mutate(objects, format, m) {
  const tree = structuredClone(objects);
  if (TREE_OPS.includes(m.op)) {
    const all = paths(tree).filter((p) => p.length > 0);
    const path = pick(all, m.path);
    const current = getAt(tree, path);
    switch (m.op) {
      case 'hostile':
        setAt(tree, path, pick(HOSTILE, m.value));
        break;
      case 'hostile-affix': {
        const base = typeof current === 'string' ? current : String(current);
        const h = pick(HOSTILE, m.value);
        setAt(tree, path, m.pos % 2 ? base + h : h + base);
        break;
      }
      case 'wrong-type':
        setAt(tree, path, structuredClone(pick(WRONG_TYPES, m.value)));
        break;
      case 'number':
        setAt(tree, path, pick(NUMBERS, m.value));
        break;
      case 'bad-ip':
        setAt(tree, path, pick(BAD_IPS, m.value));
        break;
      case 'delete':
        deleteAt(tree, path);
        break;
      case 'duplicate-object':
        tree.push(structuredClone(tree[m.path % tree.length]));
        break;
      case 'rename-key': {
        const parentPath = path.slice(0, -1);
        const parent = getAt(tree, parentPath);
        const key = path[path.length - 1];
        if (parent && typeof parent === 'object' && !Array.isArray(parent)) {
          const v = parent[key];
          delete parent[key];
          parent[`${String(key)}${pick(HOSTILE, m.value)}`] = v;
        }
        break;
      }
      case 'add-key':
        if (current && typeof current === 'object' && !Array.isArray(current)) current[pick(HOSTILE, m.value) || 'k'] = pick(HOSTILE, m.pos);
        break;
    }
    return serialize(tree, format);
  }
  const text = serialize(tree, format);
  const at = m.pos % (text.length + 1);
  switch (m.op) {
    case 'truncate':
      return text.slice(0, at);
    case 'random-bytes':
      return text.slice(0, at) + Buffer.from(m.bytes).toString('latin1') + text.slice(at);
    case 'replace-byte':
      return text.slice(0, at) + String.fromCharCode(m.bytes[0]) + text.slice(at + 1);
    case 'delete-range':
      return text.slice(0, at) + text.slice(at + 1 + (m.value % 40));
    case 'inject-yaml':
      return text.slice(0, at) + pick(['\n---\n', '*a', '&a ', '!!binary ', '? ', '[', ']', '{', '}', ': ', '- ', '|', '>', '%YAML 1.1\n', '<<: *a\n', '\t'], m.value) + text.slice(at);
    default:
      return text.slice(0, at) + pick(HOSTILE, m.value) + text.slice(at);
  }
}
