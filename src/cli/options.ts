// Flags to typed options. Each command's flags are declared here beside the interface of
// what commander makes of them, and turned into the options its run function takes: every
// flag checked, and a usage error (exit 2) for one that is wrong, before any work starts.
import { Option, type Command } from 'commander';
import { UsageError } from '../diag/diagnostic.js';
import type { CompileOptions } from '../model/options.js';
import { NEWEST_KUBE_PROXY, parseKubeProxyVersion, type KubeProxyVersion } from '../model/kube-proxy-version.js';
import { isIPv4Mapped, parseIP, type IP } from '../net/ip.js';
import { DEFAULT_LAYOUT, LAYOUTS, type Layout } from '../backends/nftables/layout.js';
import { DEFAULT_SOURCE_PORT, IFNAME_RE, familyMismatch, parseHostPort, type L4Protocol, type TracePacket } from '../trace/packet.js';

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

function intArg(flag: string, min: number, max: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`${flag}: must be a whole number from ${min} to ${max}`);
    return Number(v);
  };
}

function boolArg(flag: string) {
  return (v: string): boolean => {
    if (v !== 'true' && v !== 'false') throw new UsageError(`${flag}: must be true or false`);
    return v === 'true';
  };
}

// ---- what every command that compiles a snapshot takes

/** The flags of addSnapshotOptions, as commander gives them. */
export interface SnapshotFlags {
  node?: string;
  nodeIp?: string[];
  clusterCidr?: string;
  detectLocalMode?: string;
  nodePortAddresses?: string[];
  /** true for a bare `--masquerade-all`. */
  masqueradeAll?: boolean;
  masqueradeBit?: number;
  table?: string;
  family?: 'ipv4' | 'ipv6';
  kubeProxyVersion?: KubeProxyVersion;
  strict?: boolean;
  debug?: boolean;
}

/** --kube-proxy-version: a release as Kubernetes prints it, to the table that release programs. */
function versionArg(v: string): KubeProxyVersion {
  const parsed = parseKubeProxyVersion(v);
  if ('problem' in parsed) throw new UsageError(`--kube-proxy-version: ${parsed.problem}`);
  return parsed.version;
}

/** The options every command that compiles a snapshot takes. */
export function addSnapshotOptions(cmd: Command): Command {
  return cmd
    .argument('<files...>', 'snapshot files or directories, or - for standard input')
    .option('--node <name>', 'the node to compile for')
    .option('--node-ip <ip>', 'an IP of the node (repeatable)', collect)
    .option('--cluster-cidr <cidrs>', 'override clusterCIDR (comma-separated, one per family)')
    .option('--detect-local-mode <mode>', 'override detectLocalMode')
    .option('--node-port-addresses <cidrs>', 'override nodePortAddresses (comma-separated CIDRs, or primary)', collect)
    .option('--masquerade-all [bool]', 'override masqueradeAll', boolArg('--masquerade-all'))
    .option('--masquerade-bit <n>', 'override masqueradeBit', intArg('--masquerade-bit', 0, 31))
    .option('--table <name>', 'nftables table name', 'kube-proxy')
    .addOption(new Option('--family <family>', 'compile one IP family only').choices(['ipv4', 'ipv6']))
    .option(
      '--kube-proxy-version <version>',
      `nftables: the table this kube-proxy release programs (1.37, v1.36.2; default: the Node's status.nodeInfo, else ${NEWEST_KUBE_PROXY})`,
      versionArg,
    )
    .option('--strict', 'treat warnings as errors')
    .option('--debug', 'show stack traces of internal errors');
}

/** The KubeProxyConfiguration overrides the flags give. */
export function compileOptionsFrom(o: SnapshotFlags): CompileOptions {
  return {
    node: o.node,
    nodeIPs: o.nodeIp,
    clusterCIDR: o.clusterCidr,
    detectLocalMode: o.detectLocalMode,
    nodePortAddresses: o.nodePortAddresses,
    masqueradeAll: o.masqueradeAll === undefined ? undefined : o.masqueradeAll === true,
    masqueradeBit: o.masqueradeBit,
    family: o.family === 'ipv4' ? 4 : o.family === 'ipv6' ? 6 : undefined,
    kubeProxyVersion: o.kubeProxyVersion,
  };
}

/** What every command that compiles a snapshot is given. */
export interface SnapshotOptions {
  compile: CompileOptions;
  tableName: string;
  /** Warnings fail the run. */
  strict: boolean;
}

const DEFAULT_TABLE = 'kube-proxy';

function snapshotOptionsFrom(o: SnapshotFlags): SnapshotOptions {
  const tableName = o.table ?? DEFAULT_TABLE;
  if (!/^[A-Za-z_.][A-Za-z0-9_.-]{0,255}$/.test(tableName)) {
    throw new UsageError('--table: must be an nft name: letters, digits, "_", "." and "-", not starting with a digit or "-"');
  }
  return { compile: compileOptionsFrom(o), tableName, strict: o.strict === true };
}

/** --layout of compile, diff and trace: kube-proxy's nftables layout, or fast-load (docs/fast-load.md). */
function layoutOption(): Option {
  return new Option('--layout <layout>', 'nftables layout: kube-proxy, or fast-load (the same behaviour, loaded many times faster)')
    .choices([...LAYOUTS])
    .default(DEFAULT_LAYOUT);
}

// ---- compile

export type CompileBackendName = 'nftables' | 'ovs';

export interface CompileFlags extends SnapshotFlags {
  backend: CompileBackendName;
  format: 'text' | 'json';
  layout: Layout;
  output?: string;
  stats?: boolean;
  statsFormat?: StatsFormat;
}

export type StatsFormat = 'text' | 'json';

export function addCompileOptions(cmd: Command): Command {
  return addSnapshotOptions(
    cmd
      .addOption(new Option('--backend <backend>', 'nftables or ovs').choices(['nftables', 'ovs']).default('nftables'))
      .addOption(new Option('--format <format>', 'nftables output: text or json').choices(['text', 'json']).default('text'))
      .addOption(layoutOption())
      .option('-o, --output <file>', 'write to FILE atomically instead of standard output')
      .option('--stats', "nftables: print on standard error what each layout's ruleset holds and an estimate of nft -f's CPU time and memory for it")
      .addOption(new Option('--stats-format <format>', '--stats as text or as one line of JSON (implies --stats)').choices(['text', 'json'])),
  );
}

export interface CompileCommandOptions extends SnapshotOptions {
  backend: CompileBackendName;
  format: 'text' | 'json';
  /** The nftables layout. */
  layout: Layout;
  /** Written atomically; standard output when not given. */
  output?: string;
  /** --stats: how to print them on standard error; none when not asked for. */
  stats?: StatsFormat;
}

/**
 * `formatGiven`: whether --format was on the command line. Its default is shown in --help,
 * so commander always gives it a value; only a --format the user wrote is refused with
 * --backend ovs, whose bundle has no text or JSON form.
 */
export function compileCommandOptionsFrom(o: CompileFlags, formatGiven: boolean): CompileCommandOptions {
  const snapshot = snapshotOptionsFrom(o);
  if (o.backend === 'ovs' && formatGiven) throw new UsageError('--format does not apply to --backend ovs (its output is an ovs-ofctl bundle)');
  if (o.backend === 'ovs' && o.layout !== DEFAULT_LAYOUT) throw new UsageError('--layout does not apply to --backend ovs');
  if (o.backend === 'ovs' && o.kubeProxyVersion !== undefined) throw new UsageError('--kube-proxy-version does not apply to --backend ovs');
  const stats = o.statsFormat ?? (o.stats ? 'text' : undefined);
  if (o.backend === 'ovs' && stats) throw new UsageError('--stats applies to the nftables backend');
  return { ...snapshot, backend: o.backend, format: o.format, layout: o.layout, output: o.output, ...(stats ? { stats } : {}) };
}

// ---- diff

/**
 * The backends `diff` can compare a live node with: the names `--backend` accepts. A new
 * one is a name here, its flags in addDiffOptions and diffOptionsFrom, and its run
 * function in main.ts's runDiffFor (the type check fails until it has one).
 */
export const DIFF_BACKENDS = ['nftables', 'ovs'] as const;
export type DiffBackendName = (typeof DIFF_BACKENDS)[number];

export interface DiffFlags extends SnapshotFlags {
  backend: DiffBackendName;
  layout: Layout;
  live?: string;
  liveFlows?: string;
  liveGroups?: string;
  exitCode?: boolean;
  twoPhase?: string;
  conntrack?: string;
  output?: string;
}

export function addDiffOptions(cmd: Command): Command {
  return addSnapshotOptions(
    cmd
      .option('--live <file>', 'nftables: what `nft -j list ruleset` printed (a file, or - for standard input)')
      .addOption(new Option('--backend <backend>', 'which live rules to compare with').choices(DIFF_BACKENDS).default('nftables'))
      .option('--live-flows <file>', 'ovs: what `ovs-ofctl -O OpenFlow15 --no-stats dump-flows BRIDGE` printed')
      .option('--live-groups <file>', 'ovs: what `ovs-ofctl -O OpenFlow15 dump-groups BRIDGE` printed')
      .addOption(layoutOption())
      .option('--exit-code', 'exit 1 when the transaction is not empty, 0 when it is')
      .option('--two-phase <file>', 'nftables: write the deletions of unused chains to FILE, to apply later (kernels before 6.2)')
      .option('--conntrack <file>', 'write to FILE the commands that clear stale UDP conntrack entries (conntrack -D; ovs: ovs-appctl dpctl/flush-conntrack), to run after the transaction or bundle')
      .option('-o, --output <file>', 'write to FILE atomically instead of standard output'),
  );
}

interface DiffCommonOptions extends SnapshotOptions {
  /** Exit 1 when there are changes. */
  exitCode: boolean;
  output?: string;
}

export interface NftDiffOptions extends DiffCommonOptions {
  backend: 'nftables';
  /** The live listing: a file, or - for standard input. */
  live: string;
  /** Where the deletions of unused chains go, to apply later; in the one transaction when not given. */
  twoPhase?: string;
  /** The nftables layout the node is moved to. */
  layout: Layout;
  /** Where the conntrack clean-up script goes (written atomically, empty when nothing is stale); none when not given. */
  conntrack?: string;
}

export interface OvsDiffOptions extends DiffCommonOptions {
  backend: 'ovs';
  /** The bridge's dump-flows and dump-groups: files, or - for one of them. */
  liveFlows: string;
  liveGroups: string;
  /** Where the flush-conntrack clean-up script goes (written atomically, empty when nothing is stale); none when not given. */
  conntrack?: string;
}

export type DiffCommandOptions = NftDiffOptions | OvsDiffOptions;

export function diffOptionsFrom(files: string[], o: DiffFlags): DiffCommandOptions {
  const common = { ...snapshotOptionsFrom(o), exitCode: o.exitCode === true, output: o.output };
  if (o.backend === 'ovs') {
    if (o.liveFlows === undefined || o.liveGroups === undefined) {
      throw new UsageError('--backend ovs needs --live-flows FILE and --live-groups FILE (what ovs-ofctl dump-flows and dump-groups printed)');
    }
    if (o.live !== undefined) throw new UsageError('--live is the nftables listing; with --backend ovs give --live-flows and --live-groups');
    if (o.twoPhase !== undefined) throw new UsageError('--two-phase does not apply to --backend ovs');
    if (o.layout !== DEFAULT_LAYOUT) throw new UsageError('--layout does not apply to --backend ovs');
    if (o.kubeProxyVersion !== undefined) throw new UsageError('--kube-proxy-version does not apply to --backend ovs');
    if ([o.liveFlows, o.liveGroups, ...files].filter((f) => f === '-').length > 1) {
      throw new UsageError('only one of --live-flows, --live-groups and the snapshot can read standard input');
    }
    return { ...common, backend: 'ovs', liveFlows: o.liveFlows, liveGroups: o.liveGroups, conntrack: o.conntrack };
  }
  if (o.liveFlows !== undefined || o.liveGroups !== undefined) throw new UsageError('--live-flows and --live-groups need --backend ovs');
  if (o.live === undefined) throw new UsageError("required option '--live <file>' not specified");
  if (o.live === '-' && files.includes('-')) throw new UsageError('--live - and a snapshot from standard input cannot both read standard input');
  return { ...common, backend: 'nftables', live: o.live, twoPhase: o.twoPhase, layout: o.layout, conntrack: o.conntrack };
}

// ---- trace

export type TraceBackendName = 'nftables' | 'ovs';

export interface TraceFlags extends SnapshotFlags {
  src?: string;
  dst?: string;
  dport?: string;
  sport?: string;
  proto: L4Protocol;
  iif?: string;
  fromNode?: boolean;
  affinity?: string;
  packets?: string;
  backend: TraceBackendName;
  layout: Layout;
  json?: boolean;
}

export function addTraceOptions(cmd: Command): Command {
  return addSnapshotOptions(
    cmd
      .option('--src <ip>', 'source address')
      .option('--dst <ip>', 'destination address')
      .option('--dport <port>', 'destination port')
      .option('--sport <port>', `source port (default ${DEFAULT_SOURCE_PORT})`)
      .addOption(new Option('--proto <protocol>', 'transport protocol').choices(['tcp', 'udp', 'sctp']).default('tcp'))
      .option('--iif <name>', 'the interface the packet arrives on (default: a Pod interface for Pod sources, else the node network)')
      .option('--from-node', 'trace a packet the node sends itself (output hook) instead of one arriving at it')
      .option('--affinity <endpoint>', 'the client already has session affinity to this endpoint (IP:PORT): an earlier connection reached it')
      .option('--packets <file>', 'a JSON or YAML array of {sourceIP, destIP, destPort, protocol} to trace')
      .addOption(new Option('--backend <backend>', 'which compiled rules to walk').choices(['nftables', 'ovs']).default('nftables'))
      .addOption(layoutOption())
      .option('--json', 'one JSON object per packet, one per line'),
  );
}

export interface TraceCommandOptions extends SnapshotOptions {
  backend: TraceBackendName;
  /** The nftables layout to compile and walk. */
  layout: Layout;
  /** The one packet the flags describe, or the file that lists many. */
  packets: { packet: TracePacket } | { file: string };
  json: boolean;
}

export function traceOptionsFrom(o: TraceFlags): TraceCommandOptions {
  const snapshot = snapshotOptionsFrom(o);
  if (o.backend === 'ovs' && o.layout !== DEFAULT_LAYOUT) throw new UsageError('--layout does not apply to --backend ovs');
  if (o.backend === 'ovs' && o.kubeProxyVersion !== undefined) throw new UsageError('--kube-proxy-version does not apply to --backend ovs');
  return { ...snapshot, backend: o.backend, layout: o.layout, packets: packetsFrom(o), json: o.json === true };
}

function packetsFrom(o: TraceFlags): TraceCommandOptions['packets'] {
  if (o.packets === undefined) return { packet: packetFromFlags(o) };
  const given = (['src', 'dst', 'dport', 'sport', 'iif', 'fromNode', 'affinity'] as const).filter((k) => o[k] !== undefined);
  const flag = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (given.length) throw new UsageError(`--packets cannot be combined with ${given.map(flag).join(', ')}`);
  return { file: o.packets };
}

function ipFlag(flag: string, v: string): IP {
  const ip = parseIP(v);
  if (!ip || isIPv4Mapped(ip)) throw new UsageError(`${flag}: ${JSON.stringify(v)} is not a valid IP address`);
  return ip;
}

function portFlag(flag: string, v: string): number {
  if (!/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535) throw new UsageError(`${flag}: must be a whole number from 1 to 65535`);
  return Number(v);
}

/** The one packet the flags describe. */
function packetFromFlags(o: TraceFlags): TracePacket {
  const { src, dst, dport } = o;
  if (src === undefined || dst === undefined || dport === undefined) {
    const missing = (['src', 'dst', 'dport'] as const).filter((k) => o[k] === undefined);
    throw new UsageError(`trace needs ${missing.map((k) => `--${k}`).join(', ')} (or --packets FILE)`);
  }
  const srcIP = ipFlag('--src', src);
  const dstIP = ipFlag('--dst', dst);
  if (srcIP.family !== dstIP.family) throw new UsageError(`--src and --dst must be of one IP family (IPv${srcIP.family} and IPv${dstIP.family} given)`);
  const mismatch = familyMismatch(o.family, dstIP);
  if (mismatch) throw new UsageError(`--dst ${dst} ${mismatch}`);
  if (o.iif !== undefined && !IFNAME_RE.test(o.iif)) throw new UsageError('--iif: must be an interface name of 1 to 15 characters');
  if (o.iif !== undefined && o.fromNode === true) throw new UsageError('--iif and --from-node exclude each other: a packet the node sends arrives on no interface');
  const affinity = o.affinity === undefined ? undefined : parseHostPort(o.affinity);
  if (o.affinity !== undefined && !affinity) throw new UsageError('--affinity: must be an endpoint IP:PORT ([IP]:PORT for IPv6)');
  if (affinity && affinity.ip.family !== srcIP.family) throw new UsageError(`--affinity: an IPv${affinity.ip.family} endpoint for an IPv${srcIP.family} packet`);
  return {
    protocol: o.proto,
    src: srcIP,
    dst: dstIP,
    sport: o.sport === undefined ? DEFAULT_SOURCE_PORT : portFlag('--sport', o.sport),
    dport: portFlag('--dport', dport),
    ...(o.iif !== undefined ? { iif: o.iif } : {}),
    ...(o.fromNode === true ? { fromNode: true } : {}),
    ...(affinity ? { affinity } : {}),
  };
}
