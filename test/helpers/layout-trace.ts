// Tracing one snapshot in every kind of table (kube-proxy's layout of each release, and
// fast-load) and comparing what each packet does. The
// comparison is of outcomes, not of rule texts: each branch's verdict, DNAT endpoint,
// masquerade, and the session-affinity keys it wrote, mapped back to the endpoint whose
// lookup reads them (kube-proxy: `ip saddr @affinity-<endpoint> goto endpoint-...`;
// fast-load: the same lookup in one table-wide set with the endpoint's constants in the
// key, in a rule that updates and DNATs to the endpoint), or, for a key no lookup reads,
// whose endpoint chain writes it. The branches are compared as a multiset: the layouts choose endpoints with rules
// of different shapes, so only the set of outcomes, with multiplicity, must agree.
import { TABLE_KINDS } from '../../src/backends/nftables/layout.js';
import { compileTables, loadModel, type ModelResult } from '../../src/compile.js';
import type { CompileOptions } from '../../src/model/options.js';
import { servicePortKey, type FamilyModel } from '../../src/model/types.js';
import { addressBits, cidrContains, formatIP, ipFromBytes, parseIP, type CIDR, type IP } from '../../src/net/ip.js';
import type { Expr, Stmt } from '../../src/nft/expr.js';
import { parseEndpointChain, parseServicePortChain } from '../../src/backends/nftables/names.js';
import { ruleStmts } from '../../src/nft/objects.js';
import { StatementStore, type TableContents } from '../../src/nft/ruleset.js';
import { tableTracer } from '../../src/trace/nft/index.js';
import type { PacketState } from '../../src/trace/nft/state.js';
import { compileExpr, datumText, type ExprFn } from '../../src/trace/nft/values.js';
import { hostPort, type L4Protocol, type TracePacket } from '../../src/trace/packet.js';
import type { TraceResult } from '../../src/trace/result.js';

/**
 * A lookup of a client in an affinity set, and the endpoint it sends the client to, as
 * "Service port endpoint-address:port": kube-proxy's `KEY @SET goto endpoint-...` (the
 * endpoint chain's name says which), or fast-load's `KEY @SET ... dnat to EP` in a Service
 * chain (the chain's name says the Service port, the DNAT the endpoint).
 */
interface Reader {
  key: ExprFn;
  endpoint: string;
}

export interface LayoutTracer {
  trace(p: TracePacket): TraceResult;
  /** Every affinity lookup of the table, by set name, for each family. */
  readers: Map<number, Map<string, Reader[]>>;
  /**
   * Every affinity update of the table, by set name, for each family: the endpoint chain
   * that writes the key names the endpoint (or the DNAT of the rule that writes it). A key
   * no lookup reads (fast-load's Service port of one endpoint, whose lookup would go where
   * its draw goes) stands for its writer's.
   */
  writers: Map<number, Map<string, Reader[]>>;
}

function affinityWriters(t: TableContents): Map<string, Reader[]> {
  const out = new Map<string, Reader[]>();
  for (const c of t.chains) {
    const ep = parseEndpointChain(c.chain.name);
    for (const r of c.rules) {
      const stmts = ruleStmts(r);
      // An endpoint chain's update names its endpoint; so does the update in a Service
      // port's chain of one endpoint (fast-load's IPv4 form), with the DNAT after it.
      const endpoint = ep ? `${servicePortKey(ep.id)} ${hostPort(ep.ip, ep.port)}` : endpointOf(c.chain.name, stmts);
      if (endpoint === undefined) continue;
      for (const st of stmts) {
        if (st.t !== 'update') continue;
        const list = out.get(st.set) ?? [];
        list.push({ key: compileExpr(st.key), endpoint });
        out.set(st.set, list);
      }
    }
  }
  return out;
}

function affinityReaders(t: TableContents): Map<string, Reader[]> {
  const out = new Map<string, Reader[]>();
  for (const c of t.chains) {
    for (const r of c.rules) {
      const stmts = ruleStmts(r);
      const [m] = stmts;
      if (m?.t !== 'match' || m.op !== '==' || m.right.t !== 'setref' || !reads(m.left, 'saddr')) continue;
      const endpoint = endpointOf(c.chain.name, stmts.slice(1));
      if (endpoint === undefined) continue;
      const list = out.get(m.right.name) ?? [];
      list.push({ key: compileExpr(m.left), endpoint });
      out.set(m.right.name, list);
    }
  }
  return out;
}

/** Where a lookup's rule sends a client it finds: `goto endpoint-...`, or a DNAT in a Service port's chain. */
function endpointOf(chain: string, rest: Stmt[]): string | undefined {
  const [v] = rest;
  if (rest.length === 1 && v.t === 'verdict' && 'target' in v.v) {
    const ep = parseEndpointChain(v.v.target);
    return ep && `${servicePortKey(ep.id)} ${hostPort(ep.ip, ep.port)}`;
  }
  const dnat = rest.find((st) => st.t === 'dnat');
  const sp = parseServicePortChain(chain);
  if (!dnat || dnat.t !== 'dnat' || !sp) return undefined;
  return `${servicePortKey(sp.id)} ${hostPort(dnat.ip, dnat.port)}`;
}

function reads(e: Expr, field: string): boolean {
  return (e.t === 'payload' && e.field === field) || (e.t === 'concat' && e.parts.some((p) => reads(p, field)));
}

export interface LayoutPair {
  model: ModelResult;
  /** By kind of table (TABLE_KINDS' names). */
  tracers: Record<string, LayoutTracer>;
}

export function layoutPair(name: string, text: string, opts: CompileOptions): LayoutPair {
  const model = loadModel([{ name, text }], opts);
  const tracers: Record<string, LayoutTracer> = {};
  for (const kind of TABLE_KINDS) {
    const tables = compileTables(model, { tableName: 'kube-proxy', layout: kind.layout, version: kind.version }, [], StatementStore);
    const readers = new Map(model.families.map((m, i) => [m.family as number, affinityReaders(tables[i])]));
    const writers = new Map(model.families.map((m, i) => [m.family as number, affinityWriters(tables[i])]));
    tracers[kind.name] = { trace: tableTracer(model, tables), readers, writers };
  }
  return { model, tracers };
}

function probeState(p: TracePacket): PacketState {
  return { protocol: p.protocol, saddr: p.src, daddr: p.dst, sport: p.sport, dport: p.dport, original: { daddr: p.dst, dport: p.dport }, iif: '', mark: 0, hook: 'prerouting', masqueraded: false, added: new Map(), path: [] };
}

/**
 * The endpoint an affinity key written on a branch sends the client to; throws unless
 * exactly one is read by it, or, where no lookup reads it, exactly one writes it.
 */
function readerOf(t: LayoutTracer, p: TracePacket, set: string, key: string): string {
  const env = { localAddresses: [] };
  const of = (rs: Map<number, Map<string, Reader[]>>) =>
    new Set((rs.get(p.src.family)?.get(set) ?? []).filter((r) => datumText(r.key(probeState(p), env)!) === key).map((r) => r.endpoint));
  const read = of(t.readers);
  const endpoints = read.size > 0 ? read : of(t.writers);
  if (endpoints.size !== 1) throw new Error(`affinity key ${key} in @${set} is ${read.size > 0 ? 'read' : 'written'} for ${endpoints.size} endpoints (${[...endpoints].join(', ')})`);
  return [...endpoints][0];
}

/** Each branch's outcome as a string, sorted: the multiset the layouts must agree on. */
export function outcomes(t: LayoutTracer, r: TraceResult): string[] {
  return r.branches
    .map((b) => {
      const affinity = (b.affinity ?? []).map((a) => `${formatIP(r.packet.src)} -> ${readerOf(t, r.packet, a.set, a.key)}`).sort();
      return JSON.stringify({ verdict: b.verdict, endpoint: b.endpoint ?? null, masquerade: b.masquerade, affinity });
    })
    .sort();
}

/**
 * The addresses of the node's own endpoints. kube-proxy masquerades a connection DNATed back
 * to its own source (hairpin): up to 1.35 for any endpoint, from 1.36 for the node's own
 * endpoints (its hairpin set). A source that is another endpoint's address is the node
 * itself reaching a host-network endpoint at its own address (the API server's), where
 * masquerade changes nothing; such a branch's masquerade is not compared.
 */
function localEndpointAddresses(model: ModelResult): Set<string> {
  const out = new Set<string>();
  for (const m of model.families) for (const eps of m.endpoints.values()) for (const e of eps) if (e.isLocal) out.add(formatIP(e.ip));
  return out;
}

function withoutSelfMasquerade(outcome: string, p: TracePacket, local: Set<string>): string {
  const o = JSON.parse(outcome) as { endpoint: string | null; masquerade: boolean | null };
  const src = formatIP(p.src);
  const toItself = o.endpoint !== null && (o.endpoint.startsWith(`${src}:`) || o.endpoint.startsWith(`[${src}]:`));
  if (!toItself || local.has(src)) return outcome;
  return JSON.stringify({ ...o, masquerade: null });
}

/** Traces a packet in every kind of table: the outcomes of each, to compare with the first kind's. */
export function compareLayouts(pair: LayoutPair, p: TracePacket): Record<string, string[]> {
  const local = localEndpointAddresses(pair.model);
  const out: Record<string, string[]> = {};
  for (const kind of TABLE_KINDS) {
    out[kind.name] = outcomes(pair.tracers[kind.name], pair.tracers[kind.name].trace(p))
      .map((o) => withoutSelfMasquerade(o, p, local))
      .sort();
  }
  return out;
}

// ---- packets worth sending at a snapshot, derived from its model

/** The address `n` after `ip` (n small; carries across bytes). */
export function addIP(ip: IP, n: number): IP {
  const b = Uint8Array.from(ip.bytes);
  let carry = n;
  for (let i = b.length - 1; i >= 0 && carry > 0; i--) {
    const v = b[i] + carry;
    b[i] = v & 255;
    carry = v >> 8;
  }
  return ipFromBytes(ip.family, b);
}

/** An address inside the network, a few past its start (the network itself for a host route). */
function inside(c: CIDR): IP {
  return addressBits(c.addr.family) - c.prefix >= 3 ? addIP(c.addr, 5) : c.addr;
}

const v4or6 = (m: FamilyModel, a: string, b: string): IP => parseIP(m.family === 4 ? a : b)!;

interface Source {
  src: IP;
  iif?: string;
  fromNode?: boolean;
}

/** Where packets come from: outside, a Pod, the node (arriving and sent by it). */
function sources(m: FamilyModel): Source[] {
  const out: Source[] = [{ src: v4or6(m, '203.0.113.9', '2001:db8:ff::9') }];
  const d = m.localDetector;
  if (d.mode === 'cidr') out.push({ src: inside(d.cidr) });
  for (const c of m.podCIDRs) if (d.mode !== 'cidr' || !cidrContains(d.cidr, inside(c))) out.push({ src: inside(c) });
  if (d.mode === 'bridge') out.push({ src: v4or6(m, '10.244.9.9', 'fd00:244::9'), iif: d.interfaceName });
  if (d.mode === 'prefix') out.push({ src: v4or6(m, '10.244.9.9', 'fd00:244::9'), iif: `${d.interfacePrefix}0` });
  for (const n of m.nodeIPs.slice(0, 1)) out.push({ src: n }, { src: n, fromNode: true });
  return out;
}

interface Target {
  dst: IP;
  port: number;
  protocol: L4Protocol;
}

function targets(m: FamilyModel): Target[] {
  const out: Target[] = [];
  for (const sp of m.servicePorts) {
    const protocol = sp.id.protocol.toLowerCase() as L4Protocol;
    out.push({ dst: sp.clusterIP, port: sp.port, protocol }, { dst: sp.clusterIP, port: sp.port + 1, protocol });
    if (sp.nodePort) for (const n of m.nodeIPs) out.push({ dst: n, port: sp.nodePort, protocol });
    for (const ip of [...sp.externalIPs, ...sp.loadBalancerVIPs]) out.push({ dst: ip, port: sp.port, protocol });
  }
  for (const c of m.serviceCIDRs) out.push({ dst: addIP(c.addr, 250), port: 80, protocol: 'tcp' });
  return out;
}

const packet = (s: Source, t: Target): TracePacket => ({
  protocol: t.protocol,
  src: s.src,
  dst: t.dst,
  sport: 40000,
  dport: t.port,
  ...(s.iif ? { iif: s.iif } : {}),
  ...(s.fromNode ? { fromNode: true } : {}),
});

const REFUSED = { 4: ['198.18.0.9', '100.64.0.9', '172.16.0.9'], 6: ['2001:db9::9', 'fd99::9', '2600:1::9'] };

/**
 * Every target (each Service port's ClusterIP and an unused port of it, its NodePort on each
 * node address, its external and load-balancer IPs, an unallocated Service address) from
 * every source (outside, a Pod, the node arriving and sending); each Service port's own
 * endpoints on this node to its ClusterIP (hairpin); and a source inside each of its allowed ranges,
 * and one outside them all, to its external addresses.
 */
export function derivedPackets(m: FamilyModel): TracePacket[] {
  const all = targets(m);
  const out = sources(m).flatMap((s) => all.map((t) => packet(s, t)));
  for (const sp of m.servicePorts) {
    const protocol = sp.id.protocol.toLowerCase() as L4Protocol;
    // Only the node's own endpoints: a remote endpoint's connection to its Service is
    // DNATed on its own node and never reaches this one (from 1.36 kube-proxy's hairpin
    // set holds the node's endpoints alone, where 1.35 masqueraded any source that was the
    // endpoint).
    for (const e of (m.endpoints.get(servicePortKey(sp.id)) ?? []).filter((x) => x.isLocal).slice(0, 3)) {
      out.push(packet({ src: e.ip }, { dst: sp.clusterIP, port: sp.port, protocol }));
    }
    const ranges = sp.loadBalancerSourceRanges;
    if (ranges.length === 0) continue;
    // A source outside every range, refused.
    const outside = REFUSED[m.family].map((a) => parseIP(a)!).find((a) => !ranges.some((r) => cidrContains(r, a)));
    for (const src of [...ranges.map(inside), ...(outside ? [outside] : [])]) {
      for (const ip of [...sp.externalIPs, ...sp.loadBalancerVIPs]) out.push(packet({ src }, { dst: ip, port: sp.port, protocol }));
    }
  }
  return out;
}

/**
 * For each Service port with ClientIP affinity and each of its first endpoints, the
 * packets of `packets` addressed to that Service port, sent by a client that already has
 * affinity to the endpoint.
 */
export function affinityPackets(m: FamilyModel, packets: TracePacket[]): TracePacket[] {
  const out: TracePacket[] = [];
  for (const sp of m.servicePorts) {
    if (sp.affinityTimeout === undefined) continue;
    const protocol = sp.id.protocol.toLowerCase();
    const addressed = (p: TracePacket) =>
      p.protocol === protocol &&
      ((p.dport === sp.port && [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerVIPs].some((a) => formatIP(a) === formatIP(p.dst))) ||
        (sp.nodePort !== 0 && p.dport === sp.nodePort && m.nodeIPs.some((a) => formatIP(a) === formatIP(p.dst))));
    const mine = packets.filter(addressed);
    for (const e of (m.endpoints.get(servicePortKey(sp.id)) ?? []).slice(0, 3)) {
      for (const p of mine) out.push({ ...p, affinity: { ip: e.ip, port: e.port } });
    }
  }
  return out;
}

/** The endpoints of a trace's outcomes (as `outcomes` gives them), in order, with repeats. */
export function endpointsOf(outcomes: string[]): (string | null)[] {
  return outcomes.map((o) => (JSON.parse(o) as { endpoint: string | null }).endpoint);
}
