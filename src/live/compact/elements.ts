// The `elem` array of a set or map of ours as nft 1.0.6 lists it, read straight from the
// listing's text into what the diff compares: each element's key (keyString) and what it
// holds besides (elementValueKey), sorted as the reader sorts elements (compareKeys, by
// elementSortKey of the key's parts). The maps of a 10,000-Service table hold some 27,000
// elements; reading each into JSON objects cost more than the rest of its set.
//
// Only nft's exact spelling of what kproxc writes is read here (canonical addresses, names
// kproxc writes, comments without escapes); anything else is null, and the set is read
// the checked reader (checked/json.ts readElement), which reports what it does not understand.
import { formatIP, parseIP } from '../../net/ip.js';
import type { DataType, KeyPart, NftSet } from '../../nft/objects.js';
import { elementSortKey } from '../../nft/ruleset.js';

const sticky = (source: string) => new RegExp(source, 'y');
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const PART: Record<DataType, RegExp> = {
  ipv4_addr: sticky(`"(${OCTET}(?:\\.${OCTET}){3})"`),
  ipv6_addr: sticky('"([0-9a-f:.]{2,45})"'),
  inet_proto: sticky('"(tcp|udp|sctp)"'),
  inet_service: sticky('(0|[1-9][0-9]{0,4})'),
  integer: sticky('(?!)'), // only in sets with timeouts, whose members are read as JSON (scan.ts)
};
const VERDICT = sticky('\\{"(?:(jump|goto)": \\{"target": "([A-Za-z_.][A-Za-z0-9_./-]*)"\\}|(drop|accept|return)": null)\\}');
const COMMENT = sticky(', "comment": "([^"\\\\\\x00-\\x1f]*)"\\}\\}');

/** The elements: keys and values in reading order (sorted as LiveReader sorts them). */
export interface ElementLines {
  keys: string[];
  values: string[];
}

/**
 * The elements in `s` from `pos` (just past `"elem": [`) up to `end` (the closing `]`);
 * null when any of them is not read here.
 */
export function readElements(s: string, pos: number, end: number, set: NftSet): ElementLines | null {
  const r = new ElementReader(s, pos, set);
  const read: { sort: string; key: string; value: string }[] = [];
  for (;;) {
    const e = r.element();
    if (!e) return null;
    read.push(e);
    if (r.at === end) break;
    if (!r.lit(', ')) return null;
  }
  read.sort((a, b) => (a.sort < b.sort ? -1 : a.sort > b.sort ? 1 : 0));
  return { keys: read.map((e) => e.key), values: read.map((e) => e.value) };
}

class ElementReader {
  constructor(
    private readonly s: string,
    public at: number,
    private readonly set: NftSet,
  ) {}

  lit(text: string): boolean {
    for (let i = 0; i < text.length; i++) if (this.s.charCodeAt(this.at + i) !== text.charCodeAt(i)) return false;
    this.at += text.length;
    return true;
  }

  private match(re: RegExp): RegExpExecArray | null {
    re.lastIndex = this.at;
    const m = re.exec(this.s);
    if (m) this.at = re.lastIndex;
    return m;
  }

  /** One element: `KEY`, or `[KEY, VERDICT]` in a map; a key with a comment is `{"elem": {"val": KEY, "comment": "..."}}`. */
  element(): { sort: string; key: string; value: string } | null {
    const map = this.set.kind === 'map';
    if (map && !this.lit('[')) return null;
    const commented = this.lit('{"elem": {"val": ');
    const key = this.key();
    if (!key) return null;
    let comment = 'null';
    if (commented) {
      const c = this.match(COMMENT);
      if (!c) return null;
      comment = `"${c[1]}"`; // as JSON.stringify writes it: nothing in it needs escaping
    }
    let verdict = 'null';
    if (map) {
      const v = this.lit(', ') ? this.match(VERDICT) : null;
      if (!v || !this.lit(']')) return null;
      // As JSON.stringify writes readVerdict's object.
      verdict = v[1] ? `{"kind":"${v[1]}","target":"${v[2]}"}` : `{"kind":"${v[3]}"}`;
    }
    return { sort: key.sort, key: key.text, value: `[${verdict},${comment}]` };
  }

  /** A key: its keyString, and its elementSortKey. */
  private key(): { text: string; sort: string } | null {
    const types = this.set.keyType;
    if (types.length === 1) {
      const p = this.part(types[0]);
      return p && { text: p.text, sort: elementSortKey([p.part]) };
    }
    if (!this.lit('{"concat": [')) return null;
    let text = '';
    const parts: KeyPart[] = [];
    for (let i = 0; i < types.length; i++) {
      if (i > 0 && !this.lit(', ')) return null;
      const p = this.part(types[i]);
      if (!p) return null;
      text += i > 0 ? ` . ${p.text}` : p.text;
      parts.push(p.part);
    }
    return this.lit(']}') ? { text, sort: elementSortKey(parts) } : null;
  }

  /** A part of a key: its text (as keyString writes it) and its value. */
  private part(type: DataType): { text: string; part: KeyPart } | null {
    const m = this.match(PART[type]);
    if (!m) return null;
    const v = m[1];
    switch (type) {
      case 'ipv4_addr':
      case 'ipv6_addr': {
        const ip = parseIP(v);
        // Of the set's family, and canonical only: keyString writes formatIP.
        if (!ip || ip.family !== (type === 'ipv4_addr' ? 4 : 6) || formatIP(ip) !== v) return null;
        return { text: v, part: { t: 'ip', ip } };
      }
      case 'inet_proto':
        // The pattern takes only these.
        return { text: v, part: { t: 'proto', name: v as 'tcp' | 'udp' | 'sctp' } };
      case 'inet_service':
        return Number(v) > 65535 ? null : { text: v, part: { t: 'port', n: Number(v) } };
      case 'integer':
        return null;
    }
  }
}
