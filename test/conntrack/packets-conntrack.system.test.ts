// `kproxc diff --conntrack` on the real kernel: a UDP client keeps sending from one socket
// to a Service (one flow, one conntrack entry) while the node moves to a new snapshot.
// Applying the transaction alone leaves the flow where its entry says; running the script
// after it moves the flow to what the new rules say. Lab: test/helpers/packet-lab.ts (a
// client, a node with the ruleset, the Pods), with a UDP server on each endpoint address
// that answers with that address.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { kproxc } from '../helpers/kproxc.js';
import { LAB, PacketLab } from '../helpers/packet-lab.js';
import { oneNodeListHead } from '../helpers/conntrack-snapshot.js';

const DNS = { ip: '10.96.0.10', endpoints: ['10.180.0.1', '10.180.0.2'] };
const LATE = { ip: '10.96.0.20', endpoint: '10.180.0.3' };
/** A Service only the new snapshot has: before, its address is routed on untranslated (no rule takes it). */
const FRESH = { ip: '10.96.0.30', endpoint: '10.180.0.4' };
const PORT = 53;

/** A snapshot: kube-system/dns with these endpoints, default/late with these, and default/fresh when asked. */
function snapshot(dnsEndpoints: string[], lateEndpoints: string[], fresh = false): string {
  const slice = (svc: string, ns: string, ips: string[]) => `
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: ${svc}-1, namespace: ${ns}, labels: {kubernetes.io/service-name: ${svc}}}
  addressType: IPv4
  ports: [{name: dns, port: ${PORT}, protocol: UDP}]
  endpoints: [${ips.map((ip) => `{addresses: [${ip}], conditions: {ready: true}, nodeName: node-1}`).join(', ')}]`;
  const service = (svc: string, ns: string, ip: string) => `
- apiVersion: v1
  kind: Service
  metadata: {name: ${svc}, namespace: ${ns}}
  spec: {type: ClusterIP, clusterIP: ${ip}, clusterIPs: [${ip}], ipFamilies: [IPv4], ports: [{name: dns, port: ${PORT}, protocol: UDP, targetPort: ${PORT}}]}`;
  return `${oneNodeListHead(LAB.nodeIPs[0])}
${service('dns', 'kube-system', DNS.ip)}
${slice('dns', 'kube-system', dnsEndpoints)}
${service('late', 'default', LATE.ip)}
${lateEndpoints.length ? slice('late', 'default', lateEndpoints) : ''}
${fresh ? service('fresh', 'default', FRESH.ip) + slice('fresh', 'default', [FRESH.endpoint]) : ''}
`;
}

// One UDP socket per endpoint address, answering with that address (a socket bound to
// 0.0.0.0 might answer from another source, which conntrack would not take as the reply).
const SERVER = `
const dgram = require('dgram');
const addrs = process.argv.slice(1);
let up = 0;
for (const a of addrs) {
  const s = dgram.createSocket('udp4');
  s.on('message', (m, r) => s.send(a, r.port, r.address));
  s.bind(${PORT}, a, () => { if (++up === addrs.length) console.log('ready'); });
}`;

// One socket, one flow: a datagram every 50 ms; each answer or ICMP error is a line.
const CLIENT = `
const dgram = require('dgram');
const [src, dst] = process.argv.slice(1);
const s = dgram.createSocket('udp4');
s.on('message', (m) => console.log('reply ' + m));
s.on('error', (e) => console.log('error ' + e.code));
s.bind(0, src, () => s.connect(${PORT}, dst, () => {
  console.log('ready');
  setInterval(() => s.send('x', (e) => e && console.log('error ' + e.code)), 50);
}));`;

class Flow {
  private readonly lines: string[] = [];
  private err = '';
  private constructor(private readonly proc: ChildProcess) {
    proc.stderr!.on('data', (d) => (this.err += d));
    let buf = '';
    proc.stdout!.on('data', (d) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      this.lines.push(...parts);
    });
  }
  static async start(lab: PacketLab, dst: string): Promise<Flow> {
    const p = spawn('ip', ['netns', 'exec', lab.client.name, process.execPath, '-e', CLIENT, LAB.clientPod, dst], { stdio: ['ignore', 'pipe', 'pipe'] });
    const flow = new Flow(p);
    await until(() => flow.lines.includes('ready'), () => `the UDP client did not start: ${flow.err} ${JSON.stringify(flow.lines)} ${p.exitCode}`);
    return flow;
  }
  /** What the flow saw over the next 600 ms: the endpoints that answered, "refused" for ICMP errors. */
  async observe(): Promise<string[]> {
    await sleep(100); // packets in flight when the state changed
    const from = this.lines.length;
    await sleep(600);
    const seen = new Set(this.lines.slice(from).map((l) => (l.startsWith('reply ') ? l.slice(6) : l === 'error ECONNREFUSED' ? 'refused' : l)));
    return [...seen].sort();
  }
  stop(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGTERM');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, what: string | (() => string)): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await sleep(50);
  if (!cond()) throw new Error(typeof what === 'string' ? what : what());
}

let lab: PacketLab | undefined;
let server: ChildProcess | undefined;
const flows: Flow[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kproxc-ct-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

beforeAll(async () => {
  lab = await PacketLab.open('ct', [...DNS.endpoints, LATE.endpoint, FRESH.endpoint], [8080], [8080]);
  server = spawn('ip', ['netns', 'exec', lab.pods.name, process.execPath, '-e', SERVER, ...DNS.endpoints, LATE.endpoint, FRESH.endpoint], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  server.stdout!.on('data', (d) => (out += d));
  await until(() => out.includes('ready'), 'the UDP servers did not start');
  const compiled = await kproxc(['compile', file('a.yaml', snapshot(DNS.endpoints, []))]);
  expect(compiled.stderr).toBe('');
  lab.load(compiled.stdout);
});

afterAll(() => {
  for (const f of flows) f.stop();
  if (server?.exitCode === null) server.kill('SIGTERM');
  lab?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Moves the node to `yaml` with `kproxc diff --conntrack`, applying the transaction only; returns the script. */
async function applyDiff(yaml: string): Promise<string> {
  const node = lab!.node;
  const script = path.join(dir, 'conntrack.sh');
  const r = await kproxc(['diff', file('b.yaml', yaml), '--live', '-', '--conntrack', script], node.nft(['-j', 'list', 'ruleset']));
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).not.toBe('');
  node.nft(['-f', '-'], r.stdout);
  return fs.readFileSync(script, 'utf8');
}

let script = '';
let used = '';
let lateAfterDiff: string[] = [];
let freshAfterDiff: string[] = [];
const dnsFlow = () => flows[0];
const lateFlow = () => flows[1];
const freshFlow = () => flows[2];

it('under the first snapshot: dns answered by one endpoint, late (no endpoints) refused, fresh (no rule) unanswered', async () => {
  for (const ip of [DNS.ip, LATE.ip, FRESH.ip]) flows.push(await Flow.start(lab!, ip));
  const seen = await dnsFlow().observe();
  expect(seen.length, `one flow, one endpoint: ${seen}`).toBe(1);
  expect(DNS.endpoints).toContain(seen[0]);
  used = seen[0];
  expect(await lateFlow().observe()).toEqual(['refused']);
  expect(await freshFlow().observe(), 'routed on untranslated: no answer').toEqual([]);
});

it('kproxc diff --conntrack writes the commands for the removed endpoint and the Service addresses that were not translated', async () => {
  expect(used).not.toBe('');
  script = await applyDiff(snapshot(DNS.endpoints.filter((e) => e !== used), [LATE.endpoint], true));
  expect(script.split('\n').filter((l) => l.startsWith('conntrack '))).toEqual([
    `conntrack -D -p udp --orig-dst ${FRESH.ip} --orig-port-dst ${PORT} --reply-src ${FRESH.ip} || true`,
    `conntrack -D -p udp --orig-dst ${LATE.ip} --orig-port-dst ${PORT} --reply-src ${LATE.ip} || true`,
    `conntrack -D -p udp --orig-dst ${DNS.ip} --orig-port-dst ${PORT} --reply-src ${used} || true`,
  ]);
  lateAfterDiff = await lateFlow().observe();
  freshAfterDiff = await freshFlow().observe();
});

it('after the transaction alone, the dns flow still reaches the removed endpoint and the fresh flow is still not translated', async () => {
  expect(script).not.toBe('');
  expect(await dnsFlow().observe()).toEqual([used]);
  // Its entry was made untranslated, and a UDP entry that never saw a reply stays "new":
  // its packets now meet the check that refuses a ClusterIP reached untranslated.
  expect(freshAfterDiff, 'fresh, still untranslated, refused').toEqual(['refused']);
  // A packet the old rules refused left no entry (the kernel keeps only the entries of packets
  // that got through), so late is answered at once; its command finds nothing then.
  expect(lateAfterDiff).toEqual([LATE.endpoint]);
});

it('after the conntrack script, every flow follows the new rules', async () => {
  expect(script).not.toBe('');
  const ran = lab!.node.run('sh', [path.join(dir, 'conntrack.sh')]);
  expect(ran.status, ran.stderr).toBe(0);
  expect(await dnsFlow().observe(), 'a remaining endpoint').toEqual(DNS.endpoints.filter((e) => e !== used));
  expect(await lateFlow().observe()).toEqual([LATE.endpoint]);
  expect(await freshFlow().observe()).toEqual([FRESH.endpoint]);
});
