// `diff --conntrack` for the nftables backend: where the live tables send UDP Service
// traffic, read from kube-proxy's layout (the service-ips and service-nodeports maps name
// a Service port's chain; its endpoint chains' names give the endpoints' addresses, and
// the policy chain's own DNATs where a port has no endpoint chains: from 1.36 without
// affinity), and from fast-load's forms: its rules that update the affinity set and DNAT,
// its elements that go straight to the endpoint chain of a port with affinity and one
// endpoint, the external chains of Local-policy ports that DNAT themselves, and its chains
// shared by Service ports, whose maps are keyed by the destination, reached from a
// dispatch element or, for a ClusterIP without one, from the services chain's jump. Then
// the clean-up as commands of the conntrack tool. The compiled tables are read the same
// way, so both sides agree on what "translated" means.
import { CLUSTER_IP_DNAT_CHAIN } from '../backends/nftables/fast-load/shared-dnat.js';
import { CLUSTER_IPS_SET, parseEndpointChain, parseServicePortChain, SERVICE_IPS_MAP, SERVICE_NODEPORTS_MAP } from '../backends/nftables/names.js';
import { contentsView, ruleText, type LiveTableView } from '../live/view.js';
import { servicePortKey, type FamilyModel } from '../model/types.js';
import { compareIP, formatIP, parseIP, type IP, type IPFamily } from '../net/ip.js';
import type { TableContents } from '../nft/ruleset.js';
import { conntrackSnapshot, type ConntrackSnapshot } from './snapshot.js';
import { conntrackScript, staleDeletes, type ConntrackDelete, type ConntrackLive, type ScriptForm } from './stale.js';

const UDP = ' . udp . ';

/** What the live table did with UDP destinations: which endpoint addresses each one's map element reaches. */
function readLive(view: LiveTableView, family: IPFamily): ConntrackLive {
  // Each UDP Service port's endpoint addresses (servicePortKey), from its endpoint chains.
  const endpointsOf = new Map<string, IP[]>();
  for (let i = 0; i < view.chainCount; i++) {
    const ep = parseEndpointChain(view.chainName(i));
    if (!ep || ep.id.protocol !== 'UDP' || ep.ip.family !== family) continue;
    addEndpoint(endpointsOf, servicePortKey(ep.id), ep.ip);
  }
  // From 1.36 a Service port without affinity has no endpoint chains: its policy chains
  // DNAT themselves (a numgen map, one endpoint directly, or fast-load's endpoint map); in
  // fast-load neither has one with affinity (each lookup and draw rule DNATs to its endpoint),
  // and a Local-policy port's external chain DNATs in place of its policy chains.
  const values = dataMapValues(view);
  const mapped = endpointMapTargets(values, family);
  for (let i = 0; i < view.chainCount; i++) {
    const chain = parseServicePortChain(view.chainName(i));
    if (!chain || chain.id.protocol !== 'UDP') continue;
    const texts = view.rules(i).map(ruleText);
    for (const ip of [...dnatTargets(texts, family), ...mapped(texts)]) addEndpoint(endpointsOf, servicePortKey(chain.id), ip);
  }
  const rulesOf = chainRules(view);
  const shared = sharedChainTargets(rulesOf, values, family);
  const services = new Map<string, IP[]>();
  const nodePorts = new Map<number, IP[]>();
  for (const s of view.sets) {
    const name = s.set.name;
    if (name !== SERVICE_IPS_MAP && name !== SERVICE_NODEPORTS_MAP) continue;
    s.keys.forEach((key, i) => {
      if (!key.includes(UDP) && !key.startsWith('udp . ')) return;
      const [value] = JSON.parse(s.valueKey(i)) as [{ target?: string } | null];
      const target = value?.target;
      const chain = target ? parseServicePortChain(target) : undefined;
      // fast-load sends a port with affinity and one endpoint to its endpoint chain.
      const endpoint = !chain && target ? parseEndpointChain(target) : undefined;
      // The destination as the shared chains' maps key it: address and port, or the NodePort.
      const destination = name === SERVICE_NODEPORTS_MAP ? key.slice('udp . '.length) : key.replace(UDP, ' . ');
      const endpoints =
        (chain ? endpointsOf.get(servicePortKey(chain.id)) : endpoint ? (endpoint.ip.family === family ? [endpoint.ip] : []) : target && shared(target, destination)) || [];
      if (name === SERVICE_NODEPORTS_MAP) nodePorts.set(Number(destination), endpoints);
      else services.set(key.replace(UDP, ' '), endpoints);
    });
  }
  for (const [destination, endpoints] of clusterIPDrawTargets(view, rulesOf, values, family)) {
    const key = destination.replace(' . ', ' ');
    if (!services.has(key)) services.set(key, endpoints);
  }
  return { services, nodePorts };
}

/**
 * fast-load's chains shared by Service ports (shared-dnat.ts, local-policy.ts): a
 * `service-ips` or `service-nodeports` element that goes to a chain DNATing with `... udp
 * dport . numgen random mod N [offset B] map @M` (itself, or after a `goto`) reaches the
 * addresses of M's elements `DESTINATION . B` .. `DESTINATION . B+N-1`, its destination
 * being the element's address and port, or its NodePort; a chain of several such DNATs
 * (a Local-policy port's cluster and local draws) reaches all of theirs.
 */
function sharedChainTargets(rulesOf: RulesOf, values: Map<string, string>, family: IPFamily): (chain: string, destination: string) => IP[] | undefined {
  const dnatsOf = (chain: string, hops: number): SharedDraw[] => {
    const out: SharedDraw[] = [];
    for (const text of rulesOf(chain) ?? []) {
      const draw = sharedDraw(text);
      if (draw) out.push(draw);
      const next = /^goto (\S+)$/.exec(text);
      if (next && hops > 0) out.push(...dnatsOf(next[1], hops - 1));
    }
    return out;
  };
  // Many destinations share a chain: its rules are read once.
  const dnats = new Map<string, SharedDraw[]>();
  return (chain, destination) => {
    if (!dnats.has(chain)) dnats.set(chain, dnatsOf(chain, 1));
    const draws = dnats.get(chain)!;
    if (draws.length === 0) return undefined;
    const out: IP[] = [];
    for (const dnat of draws) {
      for (let i = 0; i < dnat.n; i++) {
        const ip = addressOf(values.get(`${dnat.map} ${destination} . ${dnat.base + i}`), family);
        if (ip && !out.some((x) => compareIP(x, ip) === 0)) out.push(ip);
      }
    }
    return out;
  };
}

/** A chain's rule texts by its name; undefined for a chain the table lacks. */
type RulesOf = (chain: string) => string[] | undefined;

function chainRules(view: LiveTableView): RulesOf {
  const chainIndex = new Map<string, number>();
  for (let i = 0; i < view.chainCount; i++) chainIndex.set(view.chainName(i), i);
  return (chain) => {
    const i = chainIndex.get(chain);
    return i === undefined ? undefined : view.rules(i).map(ruleText);
  };
}

/** A shared DNAT rule's draw: among n, from base, in map. */
interface SharedDraw {
  n: number;
  base: number;
  map: string;
}

/** `... udp dport . numgen random mod N [offset B] map @M [comment "..."]`, a UDP rule of the shared chains. */
function sharedDraw(text: string): SharedDraw | undefined {
  const m = / to (?:ip6? daddr \. )?udp dport \. numgen random mod ([0-9]+)(?: offset ([0-9]+))? map @(\S+)(?: comment "[^"]*")?$/.exec(text);
  return m ? { n: Number(m[1]), base: Number(m[2] ?? 0), map: m[3] } : undefined;
}

/**
 * fast-load's ClusterIPs without a `service-ips` element (shared-dnat.ts): the services
 * chain jumps for a ClusterIP to a chain of rules `... udp dport . numgen random mod N
 * offset B map @M`, each of which finds the destinations of M's elements `A . P . k`, k in
 * B .. B+N-1; its endpoints, by `A . P`, in draw order.
 */
function clusterIPDrawTargets(view: LiveTableView, rulesOf: RulesOf, values: Map<string, string>, family: IPFamily): Map<string, IP[]> {
  const out = new Map<string, IP[]>();
  const draws = (rulesOf(CLUSTER_IP_DNAT_CHAIN) ?? []).map(sharedDraw).filter((d) => d !== undefined);
  if (draws.length === 0) return out;
  const clusterIPs = new Set(view.sets.find((s) => s.set.name === CLUSTER_IPS_SET)?.keys ?? []);
  const found: [string, number, IP][] = [];
  for (const [entry, value] of values) {
    const [map, key] = [entry.slice(0, entry.indexOf(' ')), entry.slice(entry.indexOf(' ') + 1)];
    const at = key.lastIndexOf(' . ');
    const [destination, k] = [key.slice(0, at), Number(key.slice(at + 3))];
    if (!clusterIPs.has(destination.split(' . ')[0])) continue;
    if (!draws.some((d) => d.map === map && k >= d.base && k < d.base + d.n)) continue;
    const ip = addressOf(value, family);
    if (ip) found.push([destination, k, ip]);
  }
  found.sort((a, b) => a[1] - b[1]);
  for (const [destination, , ip] of found) {
    const list = out.get(destination);
    if (list) list.push(ip);
    else out.set(destination, [ip]);
  }
  return out;
}

/** Every data map's values, by `MAP KEY`: an address, or an address and a port. */
function dataMapValues(view: LiveTableView): Map<string, string> {
  const values = new Map<string, string>();
  for (const s of view.sets) {
    if (!s.set.data) continue;
    s.keys.forEach((key, i) => {
      const [value] = JSON.parse(s.valueKey(i)) as [string | null];
      if (value) values.set(`${s.set.name} ${key}`, value);
    });
  }
  return values;
}

/** The address of a data map's value (`A` or `A . P`), when it is one of `family`. */
function addressOf(value: string | undefined, family: IPFamily): IP | undefined {
  const ip = value === undefined ? null : parseIP(value.split(' . ')[0]);
  return ip && ip.family === family ? ip : undefined;
}

/**
 * fast-load's endpoint maps: a policy chain's `... numgen random mod N offset B map @M`
 * (or `@M:P`) reaches the addresses of M's elements B .. B+N-1.
 */
function endpointMapTargets(values: Map<string, string>, family: IPFamily): (rules: readonly string[]) => IP[] {
  return (rules) => {
    const out: IP[] = [];
    for (const text of rules) {
      // `... map @M` (address and port) or `... map @M:P` (address; the port is the rule's).
      const m = / to numgen random mod ([0-9]+)(?: offset ([0-9]+))? map @([^\s:]+)/.exec(text);
      if (!m) continue;
      const base = Number(m[2] ?? 0);
      for (let i = 0; i < Number(m[1]); i++) {
        const ip = addressOf(values.get(`${m[3]} ${base + i}`), family);
        if (ip) out.push(ip);
      }
    }
    return out;
  };
}

function addEndpoint(endpointsOf: Map<string, IP[]>, key: string, ip: IP): void {
  const list = endpointsOf.get(key);
  if (!list) endpointsOf.set(key, [ip]);
  else if (!list.some((x) => compareIP(x, ip) === 0)) list.push(ip);
}

/**
 * The endpoint addresses a policy chain's rules DNAT to, as nft lists them or kproxc
 * writes them: `dnat to A:P`, `dnat to [A]:P`, or a numgen map `{ 0 : A . P , ... }`.
 */
export function dnatTargets(rules: readonly string[], family: IPFamily): IP[] {
  const out: IP[] = [];
  for (const text of rules) {
    if (!text.includes(' dnat ')) continue;
    const direct = / dnat to (?:\[([0-9a-f:.]+)\]|([0-9.]+)):[0-9]+/.exec(text);
    const texts = direct ? [direct[1] ?? direct[2]] : [...text.matchAll(/[0-9]+ : ([0-9a-f:.]+) \. [0-9]+/g)].map((m) => m[1]);
    for (const t of texts) {
      const ip = parseIP(t);
      if (ip && ip.family === family) out.push(ip);
    }
  }
  return out;
}

const familyOf = (view: LiveTableView): IPFamily => (view.table.family === 'ip6' ? 6 : 4);

const byFamily = (views: LiveTableView[]): Map<IPFamily, ConntrackLive> => new Map(views.map((v) => [familyOf(v), readLive(v, familyOf(v))]));

/** The deletes that moving from the live tables to the wanted ones asks for (stale.ts staleDeletes). */
export function conntrackDeletes(snapshot: ConntrackSnapshot, live: LiveTableView[], wanted: LiveTableView[]): ConntrackDelete[] {
  return staleDeletes(snapshot, byFamily(live), byFamily(wanted));
}

/** One command as the conntrack tool takes it. */
export function commandText(d: ConntrackDelete): string {
  const words = ['conntrack', '-D'];
  if (d.family === 6) words.push('-f', 'ipv6');
  words.push('-p', 'udp');
  if (d.origDst) words.push('--orig-dst', formatIP(d.origDst));
  words.push('--orig-port-dst', String(d.origPortDst), '--reply-src', formatIP(d.replySrc));
  return words.join(' ');
}

/** `conntrack -D` exits 1 when no entry matched, the common and harmless case: each line goes on past it. */
export const NFT_SCRIPT: ScriptForm = {
  header: '# Run after the nft transaction is applied (sh FILE): clears UDP entries the new rules would not make.',
  line: (d) => `${commandText(d)} || true`,
};

/** The script `diff --conntrack` writes: the live tables against the compiled ones, for the new snapshot. */
export function nftConntrackScript(model: { families: FamilyModel[] }, live: LiveTableView[], wanted: TableContents[]): string {
  return conntrackScript(conntrackDeletes(conntrackSnapshot(model), live, wanted.map(contentsView)), NFT_SCRIPT);
}
