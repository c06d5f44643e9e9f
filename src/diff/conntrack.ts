// The connection-tracking clean-up a rules change needs, as kube-proxy's rule states it
// (pkg/proxy/conntrack/cleanup.go): for each UDP Service port with serving endpoints, the
// entries sent to its ClusterIP, external IPs, load-balancer IPs or NodePort whose reply
// source is not a serving endpoint must go, because the kernel keeps sending an existing
// UDP flow where its entry says, whatever the rules now say. TCP, and Service ports without
// serving endpoints, are left alone, as kube-proxy leaves them.
//
// kube-proxy lists the conntrack table and filters it; here the table is not at hand, so
// the reply sources an entry can have are taken from the live rules: an address the live
// table sent to a Service port's endpoint chains (their DNAT targets), or the Service
// address itself when the live table did not translate it (no endpoints, or no rule).
// The computation takes the live side in a backend-neutral shape (ConntrackLive); the
// nftables tables are read into it here, the ovs bridge's dumps in src/diff/ovs/conntrack.ts.
import { compareIP, formatIP, parseIP, type IP, type IPFamily } from '../net/ip.js';
import type { LiveTableView } from '../live/view.js';

/** One UDP Service port of the new snapshot, in one IP family. */
export interface ConntrackServicePort {
  family: IPFamily;
  /** "namespace/name:port" as the script's comments name it. */
  name: string;
  /** The ClusterIP, external IPs and load-balancer IPs it owns (one Service port per address and port). */
  addresses: IP[];
  port: number;
  /** 0 when it has none, or another Service port owns it. */
  nodePort: number;
  /** The addresses of its serving endpoints (ready or terminating), whichever node they are on. */
  serving: IP[];
}

export interface ConntrackSnapshot {
  servicePorts: ConntrackServicePort[];
  /** Per family: the node addresses that accept NodePorts, the reply source of a NodePort entry not translated. */
  nodePortAddresses: Map<IPFamily, IP[]>;
}

/** One `conntrack -D`: entries to address (any when absent) and port whose reply source is replySrc. */
export interface ConntrackDelete {
  family: IPFamily;
  /** The Service port it is for, for the script's comments. */
  servicePort: string;
  origDst?: IP;
  origPortDst: number;
  replySrc: IP;
}

/** How the live table handled one UDP destination: the endpoint addresses it sent it to, or none (not translated). */
type LiveDestination = IP[] | 'untranslated';

/**
 * Where one family's rules send UDP Service traffic: a destination they translate maps to
 * the endpoint addresses it goes to; one they do not translate (no endpoints, or no rule)
 * is absent.
 */
export interface ConntrackLive {
  /** "address port" (formatIP) to the endpoint addresses. */
  services: Map<string, IP[]>;
  /** NodePort to the same. */
  nodePorts: Map<number, IP[]>;
}

/** A key of ConntrackLive.services. */
export const serviceKey = (addr: IP, port: number): string => `${formatIP(addr)} ${port}`;

const UDP = ' . udp . ';

/**
 * The text of a per-Service-port chain's name after its prefix and hash: "endpoint-" or
 * "service-", "external-", ... then 8 base32 characters and "-" (names.ts).
 */
function nameText(chain: string): string | undefined {
  const dash = chain.indexOf('-');
  if (dash < 0 || chain[dash + 9] !== '-') return undefined;
  return chain.slice(dash + 10);
}

/** An endpoint chain's Service port text and address: "ns/svc/udp/p53" and 10.0.0.1 from "...__10.0.0.1/53". */
function endpointOf(chain: string, family: IPFamily): { text: string; ip: IP } | undefined {
  if (!chain.startsWith('endpoint-')) return undefined;
  const text = nameText(chain);
  const sep = text?.indexOf('__') ?? -1;
  if (!text || sep < 0) return undefined;
  const addr = text.slice(sep + 2, text.lastIndexOf('/'));
  // An IPv6 address is written with "." for ":" in chain names.
  const ip = parseIP(family === 6 ? addr.replaceAll('.', ':') : addr);
  return ip && ip.family === family ? { text: text.slice(0, sep), ip } : undefined;
}

/** What the live table did with UDP destinations: which endpoint addresses each one's map element reaches. */
function readLive(view: LiveTableView, family: IPFamily): ConntrackLive {
  const byText = new Map<string, IP[]>();
  for (let i = 0; i < view.chainCount; i++) {
    const ep = endpointOf(view.chainName(i), family);
    if (!ep || !ep.text.includes('/udp/')) continue;
    const list = byText.get(ep.text);
    if (!list) byText.set(ep.text, [ep.ip]);
    else if (!list.some((x) => compareIP(x, ep.ip) === 0)) list.push(ep.ip);
  }
  const services = new Map<string, IP[]>();
  const nodePorts = new Map<number, IP[]>();
  for (const s of view.sets) {
    const name = s.set.name;
    if (name !== 'service-ips' && name !== 'service-nodeports') continue;
    s.keys.forEach((key, i) => {
      if (!key.includes(UDP) && !key.startsWith('udp . ')) return;
      const [value] = JSON.parse(s.valueKey(i)) as [{ target?: string } | null];
      const text = value?.target ? nameText(value.target) : undefined;
      const endpoints = (text && byText.get(text)) || [];
      if (name === 'service-nodeports') nodePorts.set(Number(key.slice('udp . '.length)), endpoints);
      else services.set(key.replace(UDP, ' '), endpoints);
    });
  }
  return { services, nodePorts };
}

const familyOf = (view: LiveTableView): IPFamily => (view.table.family === 'ip6' ? 6 : 4);

const byFamily = (views: LiveTableView[]): Map<IPFamily, ConntrackLive> => new Map(views.map((v) => [familyOf(v), readLive(v, familyOf(v))]));

/**
 * The `conntrack -D` commands that clear what the change leaves stale, in the snapshot's
 * order of Service ports, each Service port's destinations in the order ClusterIP,
 * external IPs, load-balancer IPs, NodePort, and reply sources in address order. `wanted`
 * is the compiled tables, read as the live ones are: an entry not translated matters only
 * where the new rules translate (a destination dropped before and after, such as an
 * external IP of a Local-policy Service without local endpoints, has no entry to clear).
 */
export function conntrackDeletes(snapshot: ConntrackSnapshot, live: LiveTableView[], wanted: LiveTableView[]): ConntrackDelete[] {
  return staleDeletes(snapshot, byFamily(live), byFamily(wanted));
}

/** The same from the live and the compiled rules of any backend, read per family. */
export function staleDeletes(snapshot: ConntrackSnapshot, liveBy: Map<IPFamily, ConntrackLive>, wantedBy: Map<IPFamily, ConntrackLive>): ConntrackDelete[] {
  const out: ConntrackDelete[] = [];
  const seen = new Set<string>();
  const add = (d: ConntrackDelete) => {
    const key = `${d.family} ${d.origDst ? formatIP(d.origDst) : ''} ${d.origPortDst} ${formatIP(d.replySrc)}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  };
  for (const sp of snapshot.servicePorts) {
    // A Service port without serving endpoints: nothing is cleared (no entry is better than another).
    if (sp.serving.length === 0) continue;
    const serving = new Set(sp.serving.map(formatIP));
    const table = liveBy.get(sp.family);
    const now = wantedBy.get(sp.family);
    const stale = (sent: LiveDestination, translatedNow: boolean, untranslated: IP[]): IP[] =>
      (sent !== 'untranslated' ? sent : translatedNow ? untranslated : []).filter((ip) => !serving.has(formatIP(ip))).sort(compareIP);
    for (const addr of sp.addresses) {
      const key = serviceKey(addr, sp.port);
      const sent = table?.services.get(key) ?? 'untranslated';
      for (const replySrc of stale(sent, now?.services.has(key) === true, [addr])) {
        add({ family: sp.family, servicePort: sp.name, origDst: addr, origPortDst: sp.port, replySrc });
      }
    }
    if (sp.nodePort !== 0) {
      const sent = table?.nodePorts.get(sp.nodePort) ?? 'untranslated';
      const nodeAddrs = snapshot.nodePortAddresses.get(sp.family) ?? [];
      for (const replySrc of stale(sent, now?.nodePorts.has(sp.nodePort) === true, nodeAddrs)) {
        add({ family: sp.family, servicePort: sp.name, origPortDst: sp.nodePort, replySrc });
      }
    }
  }
  return out;
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

/** How a backend's script begins and says one delete. */
export interface ScriptForm {
  header: string;
  line(d: ConntrackDelete): string;
}

const NFT_SCRIPT: ScriptForm = {
  header: '# Run after the nft transaction is applied (sh FILE): clears UDP entries the new rules would not make.',
  line: (d) => `${commandText(d)} || true`,
};

/**
 * The script: empty when nothing needs clearing; else a line per Service port naming it,
 * then its commands. `conntrack -D` exits 1 when no entry matched, which is the common and
 * harmless case (the flow may have ended), so each line goes on past it: the script is
 * run after the transaction, and one flow already gone must not keep the others.
 */
export function conntrackScript(deletes: ConntrackDelete[], form: ScriptForm = NFT_SCRIPT): string {
  if (deletes.length === 0) return '';
  const lines = [form.header];
  let last = '';
  for (const d of deletes) {
    const head = `# ${d.servicePort} (UDP, IPv${d.family})`;
    if (head !== last) lines.push(head);
    last = head;
    lines.push(form.line(d));
  }
  return `${lines.join('\n')}\n`;
}
