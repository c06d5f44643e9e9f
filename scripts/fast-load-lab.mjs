#!/usr/bin/env node
// Real packets through the kube-proxy layout and the rewritten candidate layouts of
// scripts/fast-load-measure.mjs (docs/fast-load.md): spread of new connections over the
// endpoints (chi-square), session affinity over ClusterIP, NodePort and external IP,
// the timeout refresh on the affinity hit path, the hairpin masquerade, and source ranges.
//
//   node scripts/fast-load-lab.mjs [--connections 1500] [VARIANT ...]   (root; default: kp ng,aff,fwrules ng,aff,fwset)
//
// Three namespaces: client (203.0.113.2 allowed by the source ranges, 203.0.113.130 not)
// -- node (the ruleset) -- pods (every endpoint address, a server on 8080 answering with
// the address reached and the peer seen). A peer of 10.254.0.1 (the node) means masqueraded.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rewrite } from './fast-load-measure.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const NET = path.join(here, 'fast-load', 'lab-net.py');
const CLUSTER = path.join(here, 'fast-load', 'lab-cluster.yaml');
const KPROXC = path.join(here, '..', 'bin', 'kproxc');
const ENDPOINTS = {
  spread: ['10.180.0.1', '10.180.0.2', '10.180.0.3', '10.180.0.4', '10.180.0.5'],
  sticky: ['10.180.1.1', '10.180.1.2', '10.180.1.3'],
  lone: ['10.180.2.1'],
  guarded: ['10.180.3.1', '10.180.3.2'],
};
const NODE_ON_PODS = '10.254.0.1';

const sh = (ns, ...args) => execFileSync('ip', ['netns', 'exec', ns, ...args], { encoding: 'utf8' });

function lab(tag) {
  const ns = { client: `kproxc-fl-${process.pid}-${tag}-c`, node: `kproxc-fl-${process.pid}-${tag}-n`, pods: `kproxc-fl-${process.pid}-${tag}-p` };
  for (const n of Object.values(ns)) execFileSync('ip', ['netns', 'add', n]);
  const ip = (n, ...a) => sh(n, 'ip', ...a);
  execFileSync('ip', ['link', 'add', 'c0', 'netns', ns.client, 'type', 'veth', 'peer', 'name', 'n-c', 'netns', ns.node]);
  execFileSync('ip', ['link', 'add', 'p0', 'netns', ns.pods, 'type', 'veth', 'peer', 'name', 'n-p', 'netns', ns.node]);
  for (const n of Object.values(ns)) ip(n, 'link', 'set', 'lo', 'up');
  ip(ns.client, 'addr', 'add', '203.0.113.2/24', 'dev', 'c0');
  ip(ns.client, 'addr', 'add', '203.0.113.130/24', 'dev', 'c0');
  ip(ns.client, 'link', 'set', 'c0', 'up');
  ip(ns.client, 'route', 'add', 'default', 'via', '203.0.113.1');
  ip(ns.node, 'addr', 'add', '192.168.0.2/32', 'dev', 'lo'); // the node's primary address: NodePorts
  ip(ns.node, 'addr', 'add', '203.0.113.1/24', 'dev', 'n-c');
  ip(ns.node, 'addr', 'add', `${NODE_ON_PODS}/30`, 'dev', 'n-p');
  ip(ns.node, 'link', 'set', 'n-c', 'up');
  ip(ns.node, 'link', 'set', 'n-p', 'up');
  ip(ns.node, 'route', 'add', '10.180.0.0/16', 'via', '10.254.0.2');
  sh(ns.node, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
  ip(ns.pods, 'addr', 'add', '10.254.0.2/30', 'dev', 'p0');
  for (const a of Object.values(ENDPOINTS).flat()) ip(ns.pods, 'addr', 'add', `${a}/32`, 'dev', 'p0');
  ip(ns.pods, 'link', 'set', 'p0', 'up');
  ip(ns.pods, 'route', 'add', 'default', 'via', NODE_ON_PODS);
  for (const n of Object.values(ns)) sh(n, 'sysctl', '-qw', 'net.ipv4.conf.all.rp_filter=0');
  const server = spawn('ip', ['netns', 'exec', ns.pods, 'python3', NET, 'serve', '8080'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return {
    ns,
    server,
    ready: new Promise((ok) => server.stdout.once('data', ok)),
    connect(from, src, dst, port, n) {
      return JSON.parse(sh(ns[from], 'python3', NET, 'connect', src, dst, String(port), String(n)));
    },
    close() {
      server.kill();
      for (const n of Object.values(ns)) spawnSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
    },
  };
}

/** Endpoint reached and whether the server saw the node (masqueraded) instead of the client. */
const parse = (r) => (/^\d/.test(r) ? { ep: r.split(' ')[0], masq: r.split(' ')[1] === NODE_ON_PODS } : { ep: r, masq: false });
/** "endpoint masq" or "endpoint direct", one string per connection. */
const brief = (r) => `${r.ep} ${r.masq ? 'masq' : 'direct'}`;

function chiSquare(counts, n) {
  const expected = n / counts.length;
  return counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
}

/** The affinity elements the kernel holds now, as `nft list` prints them (timeouts, expiry). */
function affinityState(l) {
  const text = sh(l.ns.node, 'nft', 'list', 'ruleset');
  return [...text.matchAll(/set (affinity\S*) \{[^}]*?elements = \{ ([^}]*)\}/g)].map((m) => `${m[1]}: ${m[2].replace(/\s+/g, ' ').trim()}`);
}

async function runVariant(variant, connections, base) {
  const l = lab(variant.replace(/\W/g, ''));
  const results = { variant };
  try {
    await l.ready;
    const file = path.join(os.tmpdir(), `kproxc-fl-lab-${process.pid}-${variant}.nft`);
    fs.writeFileSync(file, variant === 'kp' ? base : rewrite(base, variant.split(',')));
    sh(l.ns.node, 'nft', '-f', file);
    fs.rmSync(file);

    const spread = l.connect('client', '203.0.113.2', '172.30.0.10', 80, connections).map(parse);
    const counts = ENDPOINTS.spread.map((e) => spread.filter((r) => r.ep === e).length);
    results.spread = { counts, chi2: Number(chiSquare(counts, connections).toFixed(2)), df: counts.length - 1 };

    // Affinity: the first connection picks, every later one from any path keeps it.
    const paths = [['172.30.0.11', 80], ['192.168.0.2', 30011], ['192.168.50.11', 80]];
    const sticky = paths.map(([dst, port]) => l.connect('client', '203.0.113.2', dst, port, 10).map(parse));
    results.affinity = { endpoints: [...new Set(sticky.flat().map((r) => r.ep))], byPath: sticky.map((rs) => [...new Set(rs.map((r) => r.ep))]) };
    await new Promise((ok) => setTimeout(ok, 3000));
    results.before = affinityState(l);
    l.connect('client', '203.0.113.2', '172.30.0.11', 80, 1); // the hit path only
    results.afterHit = affinityState(l);

    // Hairpin: the lone endpoint reaching its own Service, first (miss) then again (hit).
    results.hairpin = l.connect('pods', '10.180.2.1', '172.30.0.12', 80, 3).map(parse).map(brief);
    // An endpoint of sticky as client: masqueraded exactly when it lands on itself. Landing
    // on another endpoint is not masqueraded, and as every endpoint address lives in the
    // one pods namespace here the answer never comes back: TIMEOUT (finalState says where).
    results.hairpinSticky = l.connect('pods', '10.180.1.1', '172.30.0.11', 80, 5).map(parse).map(brief);
    // Which endpoint each client is held to now (and each element's own timeout).
    results.finalState = affinityState(l);

    // Source ranges on the load-balancer IP.
    sh(l.ns.client, 'ip', 'route', 'add', '192.168.60.13/32', 'via', '203.0.113.1');
    results.firewall = {
      allowed: l.connect('client', '203.0.113.2', '192.168.60.13', 80, 3),
      blocked: l.connect('client', '203.0.113.130', '192.168.60.13', 80, 2),
    };
  } finally {
    l.close();
  }
  return results;
}

async function main(argv) {
  let connections = 1500;
  const variants = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--connections') connections = Number(argv[++i]);
    else variants.push(argv[i]);
  }
  if (!variants.length) variants.push('kp', 'ng,aff,fwrules', 'ng,aff,fwset');
  const base = execFileSync(KPROXC, ['compile', CLUSTER], { encoding: 'utf8' });
  for (const v of variants) console.log(JSON.stringify(await runVariant(v, connections, base)));
}

await main(process.argv.slice(2));
