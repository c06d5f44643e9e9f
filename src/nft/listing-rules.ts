// A rule's "expr" array as nft 1.0.6 lists it, read straight from the listing's text into
// the text ruleBodyText prints for it: no JSON.parse, no statement objects, no writing back.
// A 10,000-Service listing holds a quarter of a million rules, and reading each into
// objects, writing it back in canonical form to check it, and printing it cost more than
// compiling the whole snapshot.
//
// Only the exact spelling nft prints for what kproxc writes is read here (its key order,
// its spacing, names and comments without escapes, canonical addresses), and for each of
// those the text is what json-read.ts and text.ts together make of it. Anything else
// (ranges, interface names, a hand-made counter, another nft's spelling) is null, and the
// rule is read the long way, as JSON.
import { parseCIDR, parseIP, formatCIDR, formatIP } from '../net/ip.js';
import type { Family } from './expr.js';
import { markHex } from './text.js';

// Names as kproxc writes them (objects.ts NAME_RE): nothing in them can be misread in text.
const NAME = '([A-Za-z_.][A-Za-z0-9_./-]*)';
// A JSON integer that JavaScript holds exactly, spelled as String(n) spells it.
const INT = '(0|[1-9][0-9]{0,14})';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
// An IPv4 address as parseIP reads it and formatIP writes it (no leading zeros).
const IPV4 = `(${OCTET}(?:\\.${OCTET}){3})`;
// Characters of an IPv6 address; whether it is the canonical spelling is checked after.
const IPV6 = '([0-9a-f:.]{2,45})';

const sticky = (source: string) => new RegExp(source, 'y');

/** `{"payload": ...}`, `{"meta": ...}`, `{"ct": ...}`, `{"fib": ...}`: the leaves of an expression. */
const LEAF = sticky(
  '\\{"(?:' +
    'payload": \\{"protocol": "(ip6?|th|tcp|udp|sctp)", "field": "(saddr|daddr|dport)"\\}' +
    '|meta": \\{"key": "(l4proto|mark|iifname)"\\}' +
    '|ct": \\{"key": "(state)"\\}' +
    '|fib": \\{"result": "type", "flags": \\["(saddr|daddr)"\\]\\}' +
    ')\\}',
);
const NUMGEN = sticky(`\\{"numgen": \\{"mode": "random", "mod": ${INT}, "offset": 0\\}\\}`);
const AND_MASK = sticky(`, ${INT}\\]\\}`);

const STMT_KIND = sticky('\\{"([a-z]+)": ');
const MATCH_OP = sticky('\\{"op": "(==|!=|in)", "left": ');
const VERDICT_TARGET = sticky(`\\{"target": "${NAME}"\\}\\}`);
const DNAT = sticky(`\\{"addr": "(?:${IPV4}|${IPV6})", "port": ${INT}\\}\\}`);
const UPDATE_OPEN = '{"op": "update", "elem": ';
const UPDATE_SET = sticky(`, "set": "@${NAME}"\\}\\}`);
const VMAP_MAP = sticky(`, "data": "@${NAME}"\\}\\}`);
const VMAP_ENTRY = sticky(`\\[${INT}, \\{"(?:(jump|goto)": \\{"target": "${NAME}"\\}|(drop|accept|return)": null)\\}\\]`);
const MANGLE = sticky(`\\{"key": \\{"meta": \\{"key": "mark"\\}\\}, "value": \\{"(\\||\\^)": \\[\\{"meta": \\{"key": "mark"\\}\\}, ${INT}\\]\\}\\}\\}`);
const SETREF = sticky(`"@${NAME}"`);
const QUOTED_WORD = sticky('"([a-z]+)"');
const NUMBER = sticky(INT);
const ADDRESS = sticky(`"(?:${IPV4}|${IPV6})"`);
const PREFIX = sticky(`\\{"prefix": \\{"addr": "(?:${IPV4}|${IPV6})", "len": ([0-9]{1,3})\\}\\}`);

/** What the right-hand side of a match may be, from what its left reads. */
const enum Left {
  Addr4, // ip saddr/daddr
  Addr6, // ip6 saddr/daddr
  Port, // any dport
  L4proto,
  CtState,
  Fib,
  Masked, // mark and MASK
  Other, // only a set reference (a concat, numgen, th saddr, mark, iifname ...)
}

/**
 * The reader's state: the text, the position it has read to, and the kind of the last
 * expression read. One reader is used for a whole listing; each read allocates only the
 * strings it returns.
 */
export class ListingRuleReader {
  private s = '';
  private at = 0;
  private left: Left = Left.Other;
  private family: Family = 'ip';

  /** Where the last successful read ended. */
  get end(): number {
    return this.at;
  }

  /**
   * The text of the statements in `[...]` whose first statement starts at `pos` (just past
   * the `[`), up to and including the closing `]`; null when any of them is not read here.
   */
  exprText(s: string, pos: number, family: Family): string | null {
    this.s = s;
    this.at = pos;
    this.family = family;
    let text = this.stmt();
    if (text === null) return null;
    while (s.startsWith(', ', this.at)) {
      this.at += 2;
      const next = this.stmt();
      if (next === null) return null;
      text += ' ' + next;
    }
    if (s.charCodeAt(this.at) !== 0x5d) return null;
    this.at++;
    return text;
  }

  private match(re: RegExp): RegExpExecArray | null {
    re.lastIndex = this.at;
    const m = re.exec(this.s);
    if (m) this.at = re.lastIndex;
    return m;
  }

  private literal(lit: string): boolean {
    if (!this.s.startsWith(lit, this.at)) return false;
    this.at += lit.length;
    return true;
  }

  /** One expression; sets this.left. */
  private expr(): string | null {
    const leaf = this.match(LEAF);
    if (leaf) {
      if (leaf[1] !== undefined) {
        const proto = leaf[1];
        const field = leaf[2];
        this.left = field === 'dport' ? Left.Port : proto === 'ip' ? Left.Addr4 : proto === 'ip6' ? Left.Addr6 : Left.Other;
        return `${proto} ${field}`;
      }
      if (leaf[3] !== undefined) {
        this.left = leaf[3] === 'l4proto' ? Left.L4proto : Left.Other;
        return leaf[3] === 'l4proto' ? 'meta l4proto' : leaf[3];
      }
      if (leaf[4] !== undefined) {
        this.left = Left.CtState;
        return 'ct state';
      }
      this.left = Left.Fib;
      return `fib ${leaf[5]} type`;
    }
    const numgen = this.match(NUMGEN);
    if (numgen) {
      this.left = Left.Other;
      return `numgen random mod ${numgen[1]}`;
    }
    if (this.literal('{"concat": [')) {
      let text = this.expr();
      if (text === null) return null;
      while (this.literal(', ')) {
        const part = this.expr();
        if (part === null) return null;
        text += ' . ' + part;
      }
      if (!this.literal(']}')) return null;
      this.left = Left.Other;
      return text;
    }
    if (this.literal('{"&": [')) {
      const inner = this.expr();
      const mask = inner === null ? null : this.match(AND_MASK);
      if (mask === null) return null;
      this.left = Left.Masked;
      return `${inner} and ${markHex(Number(mask[1]))}`;
    }
    return null;
  }

  private stmt(): string | null {
    const kind = this.match(STMT_KIND);
    if (!kind) return null;
    switch (kind[1]) {
      case 'match':
        return this.matchStmt();
      case 'jump':
      case 'goto': {
        const m = this.match(VERDICT_TARGET);
        return m && `${kind[1]} ${m[1]}`;
      }
      case 'drop':
      case 'accept':
      case 'return':
        return this.literal('null}') ? kind[1] : null;
      case 'dnat':
        return this.dnat();
      case 'set': {
        if (!this.literal(UPDATE_OPEN)) return null;
        const key = this.expr();
        const m = key === null ? null : this.match(UPDATE_SET);
        return m && `update @${m[1]} { ${key} }`;
      }
      case 'vmap':
        return this.vmap();
      case 'mangle': {
        const m = this.match(MANGLE);
        return m && `mark set mark ${m[1] === '|' ? 'or' : 'xor'} ${markHex(Number(m[2]))}`;
      }
      case 'masquerade':
        if (this.literal('null}')) return 'masquerade';
        return this.literal('{"flags": "fully-random"}}') ? 'masquerade fully-random' : null;
      case 'reject':
        return this.literal(`{"type": "${this.family === 'ip6' ? 'icmpv6' : 'icmp'}", "expr": "port-unreachable"}}`) ? 'reject' : null;
    }
    return null;
  }

  private matchStmt(): string | null {
    const opMatch = this.match(MATCH_OP);
    if (!opMatch) return null;
    const left = this.expr();
    if (left === null || !this.literal(', "right": ')) return null;
    // nft lists `ct state new` with the operator "in", and only that one.
    const op = opMatch[1];
    if ((op === 'in') !== (this.left === Left.CtState) && op !== '!=') return null;
    const right = this.value();
    if (right === null || !this.literal('}}')) return null;
    if (this.left === Left.Masked) return `${left} ${op} ${right}`;
    return op === '!=' ? `${left} != ${right}` : `${left} ${right}`;
  }

  /** The right-hand side of a match, for the left just read. */
  private value(): string | null {
    const ref = this.match(SETREF);
    if (ref) return `@${ref[1]}`;
    switch (this.left) {
      case Left.Addr4:
      case Left.Addr6:
        return this.addressValue(this.left === Left.Addr6);
      case Left.Port:
      case Left.Masked: {
        const m = this.match(NUMBER);
        return m && m[1];
      }
      case Left.L4proto:
      case Left.CtState:
      case Left.Fib: {
        const m = this.match(QUOTED_WORD);
        const want = this.left === Left.CtState ? /^new$/ : this.left === Left.Fib ? /^local$/ : /^(tcp|udp|sctp)$/;
        return m && want.test(m[1]) ? m[1] : null;
      }
    }
    return null;
  }

  /** An address, a prefix, or an anonymous set of them (`{ a , b }`, in the listing's order). */
  private addressValue(v6: boolean): string | null {
    if (!this.literal('{"set": [')) return this.address(v6);
    let text = '{ ';
    for (;;) {
      const item = this.address(v6);
      if (item === null) return null;
      text += item;
      if (this.literal(']}')) return text + ' }';
      if (!this.literal(', ')) return null;
      text += ' , ';
    }
  }

  /** One address or a prefix (never a full-length one: nft lists that as an address). */
  private address(v6: boolean): string | null {
    const a = this.match(ADDRESS);
    if (a) return v6 ? canonicalV6(a[2]) : (a[1] ?? null);
    const p = this.match(PREFIX);
    if (!p) return null;
    const addr = v6 ? p[2] : p[1];
    if (addr === undefined) return null;
    const text = `${addr}/${p[3]}`;
    const c = parseCIDR(text);
    // Canonical, host bits clear, shorter than the address: it reads and prints as itself.
    return c && c.cidr.prefix < (v6 ? 128 : 32) && formatCIDR(c.cidr) === text ? text : null;
  }

  private dnat(): string | null {
    const m = this.match(DNAT);
    if (!m) return null;
    if (m[1] !== undefined) return `dnat to ${m[1]}:${m[3]}`;
    const v6 = canonicalV6(m[2]);
    return v6 && `dnat to [${v6}]:${m[3]}`;
  }

  private vmap(): string | null {
    if (!this.literal('{"key": ')) return null;
    const key = this.expr();
    if (key === null) return null;
    const m = this.match(VMAP_MAP);
    if (m) return `${key} vmap @${m[1]}`;
    // A literal map of verdicts: its key is numgen itself (not part of a concat).
    if (!/^numgen random mod [0-9]+$/.test(key) || !this.literal(', "data": {"set": [')) return null;
    const entries: string[] = [];
    for (;;) {
      const e = this.match(VMAP_ENTRY);
      if (!e || Number(e[1]) !== entries.length) return null;
      entries.push(`${e[1]} : ${e[2] ? `${e[2]} ${e[3]}` : e[4]}`);
      if (!this.literal(', ')) break;
    }
    return this.literal(']}}}') ? `${key} vmap { ${entries.join(' , ')} }` : null;
  }
}

/** The address when it is an IPv6 address in the spelling formatIP writes; else null. */
function canonicalV6(s: string | undefined): string | null {
  if (s === undefined) return null;
  const ip = parseIP(s);
  return ip && ip.family === 6 && formatIP(ip) === s ? s : null;
}
