// A three-namespace lab for sending real packets through a loaded ruleset:
//
//   client (203.0.113.2, 203.0.113.130, 2600:5200::1; the Pod addresses 10.0.0.2, fd00:10::2)
//     ── veth ── node (192.168.0.2, 192.168.1.2, 192.168.99.11, 2001:db8::1, 2001:db8:1::2;
//                      the kproxc ruleset)
//     ── veth ── pods (every endpoint address, in 10.180.0.0/16 or fd00:10:180::/48)
//
// A TCP server in pods answers on every endpoint address with the address and port the
// connection reached and the peer it came from; one in node answers for the node's own
// addresses. A probe connects a few times and sorts what happened: a pods answer is a DNAT
// (to that endpoint; masqueraded when the peer is not the client), a node answer means no
// Service rule took it, "connection refused" is a reject, a timeout (or EPERM for a packet
// the node sends itself) is a drop. Everything is removed in close(), and only the
// processes started here are stopped, by pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { createNetns, type Netns } from './netns.js';

export const LAB = {
  clientExternal: '203.0.113.2',
  clientBlocked: '203.0.113.130',
  clientPod: '10.0.0.2',
  clientExternal6: '2600:5200::1',
  clientPod6: 'fd00:10::2',
  nodeIPs: ['192.168.0.2', '192.168.1.2', '192.168.99.11', '2001:db8::1', '2001:db8:1::2'],
  podsGateway: '10.254.0.1',
  podsGateway6: 'fd00:254::1',
};

const SERVER = `
const net = require('net');
const [who, ...ports] = process.argv.slice(1);
const hostPort = (a, p) => (a.includes(':') ? '[' + a + ']' : a) + ':' + p;
let up = 0;
for (const p of ports) {
  for (const host of ['0.0.0.0', '::']) {
    net.createServer((c) => c.end(who + ' ' + hostPort(c.localAddress, c.localPort) + ' ' + c.remoteAddress + '\\n'))
      .listen({ port: Number(p), host, ipv6Only: host === '::' }, () => { if (++up === 2 * ports.length) console.log('ready'); });
  }
}`;

const CLIENT = `
const net = require('net');
const probes = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const once = (p) => new Promise((done) => {
  const s = net.connect({ host: p.dst, port: p.port, localAddress: p.src });
  let data = '';
  const t = setTimeout(() => { s.destroy(); done({ err: 'TIMEOUT' }); }, p.timeoutMs);
  s.on('data', (d) => { data += d; });
  s.on('end', () => { clearTimeout(t); s.destroy(); done({ reply: data.trim() }); });
  s.on('error', (e) => { clearTimeout(t); done({ err: e.code }); });
});
(async () => {
  const out = [];
  for (const p of probes) { const r = []; for (let i = 0; i < p.tries; i++) r.push(await once(p)); out.push(r); }
  console.log(JSON.stringify(out));
})();`;

export interface Probe {
  src: string;
  dst: string;
  port: number;
  tries: number;
}

export interface Observed {
  verdict: 'dnat' | 'drop' | 'reject' | 'none' | string;
  endpoints: string[];
  masquerade: boolean;
  raw: string[];
}

function observe(p: Probe, tries: ({ reply: string } | { err: string })[]): Observed {
  const verdicts = new Set<string>();
  const endpoints: string[] = [];
  let masquerade = false;
  const raw: string[] = [];
  for (const t of tries) {
    if ('reply' in t) {
      raw.push(t.reply);
      const [who, local, peer] = t.reply.split(' ');
      if (who === 'pods') {
        verdicts.add('dnat');
        if (!endpoints.includes(local)) endpoints.push(local);
        if (peer !== p.src) masquerade = true;
      } else verdicts.add('none');
    } else {
      raw.push(t.err);
      verdicts.add(t.err === 'ECONNREFUSED' ? 'reject' : t.err === 'TIMEOUT' || t.err === 'EPERM' ? 'drop' : `error ${t.err}`);
    }
  }
  return { verdict: [...verdicts].sort().join('+'), endpoints: endpoints.sort(), masquerade, raw };
}

export class PacketLab {
  readonly client: Netns;
  readonly node: Netns;
  readonly pods: Netns;
  private readonly servers: ChildProcess[] = [];

  private constructor(prefix: string) {
    this.client = createNetns(prefix);
    this.node = createNetns(prefix);
    this.pods = createNetns(prefix);
  }

  static async open(prefix: string, endpointIPs: string[], podPorts: number[], nodePorts: number[]): Promise<PacketLab> {
    const lab = new PacketLab(prefix);
    try {
      lab.wire(endpointIPs);
      await lab.serve(lab.pods, 'pods', podPorts);
      await lab.serve(lab.node, 'node', nodePorts);
    } catch (e) {
      lab.close();
      throw e;
    }
    return lab;
  }

  private wire(endpointIPs: string[]): void {
    const { client, node, pods } = this;
    // Both veth ends are made inside the node namespace, so no name ever shows on the host.
    node.exec('ip', ['link', 'add', 'toclient', 'type', 'veth', 'peer', 'name', 'tonode', 'netns', client.name]);
    node.exec('ip', ['link', 'add', 'topods', 'type', 'veth', 'peer', 'name', 'tonode', 'netns', pods.name]);
    for (const ns of [client, node, pods]) ns.exec('ip', ['link', 'set', 'lo', 'up']);
    // No ICMP rate limit: every reject of a probe must reach the client, however many come.
    const sysctls = [
      'net.ipv4.ip_forward=1',
      'net.ipv6.conf.all.forwarding=1',
      'net.ipv4.conf.all.rp_filter=0',
      'net.ipv4.conf.default.rp_filter=0',
      'net.ipv4.icmp_ratelimit=0',
      'net.ipv6.icmp.ratelimit=0',
    ];
    for (const k of sysctls) node.exec('sysctl', ['-qw', k]);
    // nodad: an IPv6 address is usable at once, not after duplicate address detection.
    const addr = (ns: Netns, a: string, dev: string) => ns.exec('ip', ['addr', 'add', a, 'dev', dev, ...(a.includes(':') ? ['nodad'] : [])]);
    for (const ip of LAB.nodeIPs) addr(node, ip.includes(':') ? `${ip}/64` : `${ip}/24`, 'toclient');
    addr(node, `${LAB.podsGateway}/30`, 'topods');
    addr(node, `${LAB.podsGateway6}/64`, 'topods');
    for (const dev of ['toclient', 'topods']) node.exec('ip', ['link', 'set', dev, 'up']);
    node.exec('ip', ['route', 'add', '203.0.113.0/24', 'dev', 'toclient']);
    node.exec('ip', ['route', 'add', `${LAB.clientPod}/32`, 'dev', 'toclient']);
    node.exec('ip', ['route', 'add', '10.180.0.0/16', 'via', '10.254.0.2']);
    // As on a real node, a default route: a packet no rule takes is forwarded, not refused.
    node.exec('ip', ['route', 'add', 'default', 'via', '10.254.0.2']);
    node.exec('ip', ['-6', 'route', 'add', '2600:5200::/64', 'dev', 'toclient']);
    node.exec('ip', ['-6', 'route', 'add', `${LAB.clientPod6}/128`, 'dev', 'toclient']);
    node.exec('ip', ['-6', 'route', 'add', 'default', 'via', 'fd00:254::2']);

    const clientAddrs = ['192.168.0.100/24', `${LAB.clientExternal}/24`, `${LAB.clientBlocked}/24`, `${LAB.clientPod}/32`];
    for (const a of [...clientAddrs, '2001:db8::100/64', `${LAB.clientExternal6}/64`, `${LAB.clientPod6}/128`]) addr(client, a, 'tonode');
    client.exec('ip', ['link', 'set', 'tonode', 'up']);
    client.exec('ip', ['route', 'add', 'default', 'via', LAB.nodeIPs[0]]);
    client.exec('ip', ['-6', 'route', 'add', 'default', 'via', '2001:db8::1']);

    addr(pods, '10.254.0.2/30', 'tonode');
    addr(pods, 'fd00:254::2/64', 'tonode');
    for (const ip of endpointIPs) addr(pods, ip.includes(':') ? `${ip}/128` : `${ip}/32`, 'lo');
    pods.exec('ip', ['link', 'set', 'tonode', 'up']);
    pods.exec('ip', ['route', 'add', 'default', 'via', LAB.podsGateway]);
    pods.exec('ip', ['-6', 'route', 'add', 'default', 'via', LAB.podsGateway6]);
  }

  private serve(ns: Netns, who: string, ports: number[]): Promise<void> {
    const p = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', SERVER, who, ...ports.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.servers.push(p);
    return new Promise((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`${who} server did not start: ${err}`)), 10_000);
      p.stderr!.on('data', (d) => (err += d));
      p.stdout!.on('data', (d) => {
        if (String(d).includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      p.on('exit', (code) => reject(new Error(`${who} server exited (${code}): ${err}`)));
    });
  }

  /** Loads a ruleset into the node, replacing the previous one (the text deletes its tables first). */
  /** Whether the lab sends a probe from this source from the node itself. */
  isNodeAddress(ip: string): boolean {
    return LAB.nodeIPs.includes(ip);
  }

  load(ruleset: string): void {
    this.node.nft(['-f', '-'], ruleset);
  }

  /** Sends the probes from the client, or from the node itself for the node's own sources. */
  probe(probes: Probe[], timeoutMs = 400): Observed[] {
    const fromNode = probes.filter((p) => LAB.nodeIPs.includes(p.src));
    const fromClient = probes.filter((p) => !LAB.nodeIPs.includes(p.src));
    const run = (ns: Netns, ps: Probe[]) =>
      ps.length === 0 ? [] : (JSON.parse(ns.exec(process.execPath, ['-e', CLIENT], JSON.stringify(ps.map((p) => ({ ...p, timeoutMs }))))) as ({ reply: string } | { err: string })[][]);
    const byNode = run(this.node, fromNode);
    const byClient = run(this.client, fromClient);
    return probes.map((p) => {
      const list = LAB.nodeIPs.includes(p.src) ? fromNode : fromClient;
      const results = LAB.nodeIPs.includes(p.src) ? byNode : byClient;
      return observe(p, results[list.indexOf(p)]);
    });
  }

  close(): void {
    for (const s of this.servers) if (s.pid !== undefined && s.exitCode === null) s.kill('SIGTERM');
    for (const ns of [this.client, this.node, this.pods]) ns.destroy();
  }
}
