// A rule of our table as nft 1.0.6 lists it, read straight from the listing's text into
// the text ruleBodyText prints for it: no JSON.parse, no statement objects, no writing back.
// A 10,000-Service listing holds a quarter of a million rules, and reading each into
// objects, writing it back in canonical form to check it, and printing it cost more than
// compiling the whole snapshot.
//
// A large listing has few shapes of rules (22 at 10,000 Services) that differ only in
// names, addresses and numbers. The first rule of each shape is read statement by
// statement (recorder.ts, which says what is read and what is left to the checked reader); that
// reading is recorded as a shape: one regular expression for the whole item, its values
// captured, and how the text is made of them. Later rules of the shape are read with that
// one expression.
import type { Family } from '../../nft/expr.js';
import { Recorder, sticky, textOf, type ListedRule, type Shape } from './recorder.js';

export type { ListedRule } from './recorder.js';

// Shapes kept at most; a listing with more reads the rest statement by statement.
const MAX_SHAPES = 256;
// Rules are sorted into groups by this many characters of their statements: enough to
// tell most shapes apart, before most values.
const SIGNATURE_CHARS = 40;
const EXPR = '"expr": [';
const FAMILY_END = '{"rule": {"family": "ip'.length;
const QUOTE = 0x22;

/** Reads the rules of one table; learns their shapes as it goes. */
export class ListingRuleReader {
  /** Every shape, the most used first. */
  private readonly shapes: Shape[] = [];
  /** Shapes by the start of their statements (the first rule's), the most used first. */
  private readonly bySignature = new Map<string, Shape[]>();
  private readonly heads: Record<Family, string>;
  /** The shape of the last rule read by a shape. */
  private last?: Shape;

  constructor(tableName: string) {
    const head = (f: Family) => `{"rule": {"family": "${f}", "table": ${JSON.stringify(tableName)}, "chain": "`;
    this.heads = { ip: head('ip'), ip6: head('ip6') };
  }

  /** The rule item at `pos` when it is a rule of our table that is read here; else null. */
  item(s: string, pos: number): ListedRule | null {
    // The family from the characters after `{"rule": {"family": "ip`; the rest of the head
    // (our table) is part of every shape, and read first by the recorder.
    const family: Family = s.charCodeAt(pos + FAMILY_END) === QUOTE ? 'ip' : 'ip6';
    // Rules of a kind come in the same order chain after chain (an endpoint chain's two
    // rules, then the next chain's): the shape that followed the last one's last time is
    // tried first, without looking for the statements' start.
    const next = this.last?.next;
    const predicted = next ? readByShape(s, pos, family, next) : null;
    if (predicted) {
      this.last = next;
      return predicted;
    }
    const expr = s.indexOf(EXPR, pos);
    const signature = expr < 0 ? '' : s.slice(expr + EXPR.length, expr + EXPR.length + SIGNATURE_CHARS);
    // The shapes of that start first; then all (a value within the signature, such as a
    // jump's target, sends a rule of a known shape here).
    const read = this.byShape(s, pos, family, this.bySignature.get(signature)) ?? this.byShape(s, pos, family, this.shapes);
    if (read) return read;
    const rec = new Recorder(s, pos, family);
    const recorded = rec.item(this.heads[family]);
    if (!recorded) return null;
    if (this.shapes.length < MAX_SHAPES) {
      const shape: Shape = { re: sticky(rec.source), ...recorded.shape };
      this.shapes.push(shape);
      const group = this.bySignature.get(signature);
      if (group) group.push(shape);
      else this.bySignature.set(signature, [shape]);
      this.follow(shape);
    }
    return recorded.rule;
  }

  /** `shape` read the rule after the last one's: it is what is tried first after that one. */
  private follow(shape: Shape): void {
    if (this.last) this.last.next = shape;
    this.last = shape;
  }

  private byShape(s: string, pos: number, family: Family, shapes: Shape[] | undefined): ListedRule | null {
    for (let k = 0; shapes && k < shapes.length; k++) {
      const shape = shapes[k];
      const read = readByShape(s, pos, family, shape);
      if (!read) continue;
      // The shapes most used move to the front.
      if (k > 0) [shapes[k - 1], shapes[k]] = [shape, shapes[k - 1]];
      this.follow(shape);
      return read;
    }
    return null;
  }
}

/** The rule item at `pos` read by one shape; null when it is not of that shape. */
function readByShape(s: string, pos: number, family: Family, shape: Shape): ListedRule | null {
  shape.re.lastIndex = pos;
  const m = shape.re.exec(s);
  const text = m && textOf(shape.text, m);
  if (!m || text === null) return null;
  const comment = shape.comment > 0 ? m[shape.comment] : undefined;
  return { family, chain: m[shape.chain], handle: Number(m[shape.handle]), comment, text, end: shape.re.lastIndex };
}

