#!/usr/bin/env node
// A client in the namespace data plane: runs a list of jobs, each `count` TCP connections
// or UDP exchanges to host:port (optionally from a chosen local address and, for UDP, a
// chosen first source port), and prints one
// JSON array per job with what answered: the echo server's reply, or the error (a refusal
// is ECONNREFUSED, a silent drop is ETIMEDOUT). Every attempt is bounded by timeoutMs and
// every job by count (and by stopAfterFailures, default 2), so a probe can never hang.
import * as dgram from 'node:dgram';
import * as net from 'node:net';

const jobs = JSON.parse(process.argv[2]);
const MAX_COUNT = 200;
const MAX_TIMEOUT_MS = 5000;

/**
 * The settle-once end of one attempt: the first outcome wins, the socket is released and
 * the time taken recorded; no outcome within timeoutMs is ETIMEDOUT. A failure records
 * the local port it used, when localPort() knows it, to find its traces in conntrack.
 */
function settler(timeoutMs, release, resolve, localPort = () => undefined) {
  const t0 = Date.now();
  let done = false;
  const finish = (r) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    const port = r.ok ? undefined : localPort();
    release();
    resolve({ ...r, ...(port ? { localPort: port } : {}), ms: Date.now() - t0 });
  };
  const timer = setTimeout(() => finish({ ok: false, error: 'ETIMEDOUT' }), timeoutMs);
  return finish;
}

function attemptTcp(job) {
  return new Promise((resolve) => {
    let data = '';
    const sock = net.connect({ host: job.host, port: job.port, localAddress: job.from });
    const finish = settler(job.timeoutMs, () => sock.destroy(), resolve, () => sock.localPort);
    sock.setEncoding('utf8');
    sock.on('data', (d) => (data += d));
    sock.on('end', () => {
      try {
        finish({ ok: true, ...JSON.parse(data) });
      } catch {
        finish({ ok: false, error: 'EBADREPLY', data });
      }
    });
    sock.on('error', (e) => finish({ ok: false, error: e.code ?? e.message }));
  });
}

function attemptUdp(job) {
  return new Promise((resolve) => {
    const sock = dgram.createSocket(net.isIPv6(job.host) ? 'udp6' : 'udp4');
    const finish = settler(job.timeoutMs, () => sock.close(), resolve);
    // A connected socket: the kernel reports an ICMP port-unreachable as ECONNREFUSED, and
    // accepts replies only from host:port, so an answer proves the reply was un-NATed.
    sock.on('error', (e) => finish({ ok: false, error: e.code ?? e.message }));
    sock.on('message', (msg, rinfo) => {
      try {
        finish({ ok: true, ...JSON.parse(msg.toString('utf8')), replyFrom: rinfo.address });
      } catch {
        finish({ ok: false, error: 'EBADREPLY', data: msg.toString('utf8') });
      }
    });
    sock.bind({ address: job.from, port: job.sourcePort ?? 0 }, () => {
      sock.connect(job.port, job.host, (err) => {
        if (err) return finish({ ok: false, error: err.code ?? err.message });
        sock.send('probe');
      });
    });
  });
}

async function runJob(job) {
  const j = { ...job, count: Math.min(job.count ?? 1, MAX_COUNT), timeoutMs: Math.min(job.timeoutMs ?? 2000, MAX_TIMEOUT_MS) };
  const attempt = j.proto === 'udp' ? attemptUdp : attemptTcp;
  // Attempt i of a job with a first source port uses that port + i (UDP only).
  const nth = (i) => (j.sourcePort ? { ...j, sourcePort: j.sourcePort + i } : j);
  if (j.parallel) return Promise.all(Array.from({ length: j.count }, (_, i) => attempt(nth(i))));
  // A job that expects answers stops at its first failures: a broken ruleset should fail
  // a scenario in seconds, not after count timeouts.
  const stopAfter = j.stopAfterFailures ?? 2;
  const out = [];
  for (let i = 0, failures = 0; i < j.count && failures < stopAfter; i++) {
    const r = await attempt(nth(i));
    if (!r.ok) failures++;
    out.push(r);
  }
  return out;
}

const results = [];
for (const job of jobs) results.push(await runJob(job));
process.stdout.write(JSON.stringify(results));
