// The connection-tracking clean-up a rules change needs, as kube-proxy's rule states it
// (pkg/proxy/conntrack/cleanup.go): for each UDP Service port with serving endpoints, the
// entries sent to its ClusterIP, external IPs, load-balancer IPs or NodePort whose reply
// source is not a serving endpoint must go, because the kernel keeps sending an existing
// UDP flow where its entry says, whatever the rules now say. TCP, and Service ports without
// serving endpoints, are left alone, as kube-proxy leaves them.
//
// kube-proxy lists the conntrack table and filters it; here the table is not at hand, so
// the reply sources an entry can have are taken from the live rules: an address the live
// rules sent to a Service port's endpoints (their DNAT targets), or the Service address
// itself when the live rules did not translate it (no endpoints, or no rule). The
// computation takes the live side in a backend-neutral shape (ConntrackLive); nft.ts reads
// nftables tables into it, ovs.ts a bridge's dumps.
import { compareIP, formatIP, type IP, type IPFamily } from '../net/ip.js';
import type { ConntrackSnapshot } from './snapshot.js';

/** One delete: entries to address (any when absent) and port whose reply source is replySrc. */
export interface ConntrackDelete {
  family: IPFamily;
  /** The Service port it is for, for the script's comments. */
  servicePort: string;
  origDst?: IP;
  origPortDst: number;
  replySrc: IP;
}

/** How the live rules handled one UDP destination: the endpoint addresses they sent it to, or none (not translated). */
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

/**
 * The deletes that clear what the change leaves stale, in the snapshot's order of Service
 * ports, each Service port's destinations in the order ClusterIP, external IPs,
 * load-balancer IPs, NodePort, and reply sources in address order. `wantedBy` is the
 * compiled rules, read as the live ones are: an entry not translated matters only where
 * the new rules translate (a destination dropped before and after, such as an external IP
 * of a Local-policy Service without local endpoints, has no entry to clear).
 */
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

/** How a backend's script begins and says one delete. */
export interface ScriptForm {
  header: string;
  line(d: ConntrackDelete): string;
}

/**
 * The script: empty when nothing needs clearing; else the form's header, then a line per
 * Service port naming it, then its deletes. Each line must go on past a delete that
 * matched nothing (the flow may have ended): the script is run after the rules change,
 * and one flow already gone must not keep the others.
 */
export function conntrackScript(deletes: ConntrackDelete[], form: ScriptForm): string {
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
