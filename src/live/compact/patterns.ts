// The pieces of the listing's text the compact reader takes values from, as regular
// expression sources, shared by the reader (recorder.ts) and each kind's reading of
// itself (stmt-listing.ts).

// Names as kproxc writes them (objects.ts NAME_RE): nothing in them can be misread in text.
export const NAME = '[A-Za-z_.][A-Za-z0-9_./-]*';
// A JSON integer that JavaScript holds exactly, spelled as String(n) spells it.
export const INT = '0|[1-9][0-9]{0,14}';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
// An IPv4 address as parseIP reads it and formatIP writes it (no leading zeros).
export const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
// Characters of an IPv6 address; whether it is the canonical spelling is checked after.
export const IPV6 = '[0-9a-f:.]{2,45}';
// The inside of a JSON string without escapes or control characters: its text is its value.
export const PLAIN = '[^"\\\\\\x00-\\x1f]*';
export const PREFIX_LEN = '[0-9]{1,3}';

export const sticky = (source: string) => new RegExp(source, 'y');

/** What the right-hand side of a match may be, from what its left reads. */
export const enum Left {
  Addr4, // ip saddr/daddr
  Addr6, // ip6 saddr/daddr
  Port, // any dport
  L4proto,
  CtState,
  CtStatus,
  Fib,
  Masked, // mark and MASK
  Other, // only a set reference (a concat, numgen, th saddr, mark, iifname ...)
}
