// Twins of the property tests' random snapshots, which are IPv4 clusters of TCP and UDP
// ports: the same cluster in IPv6, or with SCTP for TCP, so that the ip6 table's forms (its
// address maps, typeof keys and DNAT statements) and the SCTP ones go through the same checks.

const QUAD = /(?<![\w.:])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?(?![\w.])/g;

/** The twin of one IPv4 address (or CIDR) in IPv6 text. */
function ipv6TwinOf(a: number, b: number, c: number, d: number, prefix?: number): string {
  const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
  return `fd00::${hex(a, b)}:${hex(c, d)}${prefix === undefined ? '' : `/${96 + prefix}`}`;
}

/**
 * The snapshot `yaml` with each IPv4 address and CIDR made its IPv6 twin: a.b.c.d becomes
 * fd00::a.b.c.d (the IPv4 address in the low 32 bits) and a prefix p 96 + p, so that the
 * same addresses are in the same networks; its EndpointSlices are of IPv6.
 */
export function ipv6Twin(yaml: string): string {
  return yaml
    .replace(QUAD, (_all, a: string, b: string, c: string, d: string, p?: string) => ipv6TwinOf(+a, +b, +c, +d, p === undefined ? undefined : +p))
    .replaceAll('addressType: IPv4', 'addressType: IPv6');
}

/** The snapshot `yaml` with its TCP ports made SCTP (Services' and EndpointSlices' alike). */
export function sctpTwin(yaml: string): string {
  return yaml.replaceAll('protocol: TCP', 'protocol: SCTP');
}
