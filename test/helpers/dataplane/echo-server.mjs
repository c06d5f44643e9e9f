#!/usr/bin/env node
// A pod's workload in the namespace data plane: listens on every (protocol, address, port)
// it is given and answers each TCP connection or UDP datagram with one JSON line naming
// the pod, the address the packet reached, and the source address it came from. That
// source is what tells masquerading from source preservation.
//
// Started with `ip netns exec NS node echo-server.mjs SPEC` by the test, which stops it by
// pid; it also exits when its standard input closes (the test process died) and after
// SPEC.maxSeconds in any case, so a crashed run never leaves it behind.
import * as dgram from 'node:dgram';
import * as net from 'node:net';

const spec = JSON.parse(process.argv[2]);
// A namespace playing another node holds many pods: each listener may name its own pod.
const answer = (l, peer, peerPort) => JSON.stringify({ pod: l.pod ?? spec.name, addr: l.addr, port: l.port, peer, peerPort }) + '\n';

function listenTcp(l) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      sock.on('error', () => sock.destroy());
      sock.end(answer(l, sock.remoteAddress, sock.remotePort));
    });
    server.once('error', reject);
    server.listen({ host: l.addr, port: l.port, exclusive: true }, () => resolve(server));
  });
}

function listenUdp(l) {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(net.isIPv6(l.addr) ? 'udp6' : 'udp4');
    sock.on('message', (_msg, rinfo) => {
      sock.send(answer(l, rinfo.address, rinfo.port), rinfo.port, rinfo.address);
    });
    sock.once('error', reject);
    sock.bind({ address: l.addr, port: l.port, exclusive: true }, () => resolve(sock));
  });
}

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
setTimeout(() => process.exit(3), (spec.maxSeconds ?? 600) * 1000);

try {
  await Promise.all(spec.listeners.map((l) => (l.proto === 'udp' ? listenUdp(l) : listenTcp(l))));
  process.stdout.write('ready\n');
} catch (e) {
  process.stderr.write(`echo-server ${spec.name}: ${e.message}\n`);
  process.exit(2);
}
