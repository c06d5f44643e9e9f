// A stand-in for Antrea's agent on the bridge's controller channel: `ovs-ofctl monitor`
// connected to the private bridge, recording every packet-in and answering none. The ovs
// backend hands a packet for a Service without endpoints to the controller
// (`controller(reason=no_match,userdata=04)`), where Antrea's agent would answer with a
// TCP reset or an ICMP unreachable. With this monitor the test sees those packet-ins.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BRIDGE, type Ovs } from '../ovs.js';

export interface PacketIn {
  /** `no_match`, `action`, ...: the reason OVS gives after "via". */
  reason: string;
  userdata?: string;
  proto: string;
  src: string;
  dst: string;
  dport: number;
}

const READY_MS = 5000;

/** Parses `ovs-ofctl monitor` output: a header line per packet-in, then indented details and the flow. */
export function parsePacketIns(text: string): PacketIn[] {
  const blocks: string[][] = [];
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    // A message header (or a log line) ends the previous message; only packet-ins are kept.
    if (/^(NXT_|OFPT_|ONFT_|\d{4}-\d\d-\d\dT)/.test(line)) {
      current = /PACKET_IN/.test(line) ? [line] : undefined;
      if (current) blocks.push(current);
    } else current?.push(line);
  }
  const out: PacketIn[] = [];
  for (const [header, ...rest] of blocks) {
    const flow = rest.find((l) => /^(tcp|udp|sctp)6?,/.test(l));
    if (!flow) continue;
    const field = (re: RegExp) => re.exec(flow)?.[1];
    out.push({
      reason: /\(via (\w+)\)/.exec(header)?.[1] ?? '',
      userdata: rest.map((l) => /^\s*userdata=(\S+)/.exec(l)?.[1]).find(Boolean),
      proto: flow.split(',')[0].replace(/6$/, ''),
      src: field(/(?:nw_src|ipv6_src)=([^,\s]+)/) ?? '',
      dst: field(/(?:nw_dst|ipv6_dst)=([^,\s]+)/) ?? '',
      dport: Number(field(/tp_dst=(\d+)/)),
    });
  }
  return out;
}

export interface PacketInMonitor {
  /** Waits for the switch to have sent everything so far, stops the monitor by pid, returns what it saw. */
  stop(): Promise<PacketIn[]>;
}

/** Connects a monitor to the bridge and resolves once the switch answered it (so it misses nothing after). */
export async function monitorPacketIns(ovs: Ovs): Promise<PacketInMonitor> {
  const ctl = path.join(ovs.dir, `monitor-${Date.now()}.ctl`);
  // miss-len 65534: OVS sends packet-ins to a monitor connection only when it asks for them.
  const child = spawn('ovs-ofctl', ['-O', 'OpenFlow15', 'monitor', BRIDGE, '65534', `--unixctl=${ctl}`], { env: ovs.env, stdio: ['ignore', 'pipe', 'pipe'] });
  // It prints the messages it receives on standard error, its own errors too.
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // 'close': the process has exited and everything it printed has been read.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  // A barrier answered through the monitor's own control socket: connected and configured.
  const barrier = () => ovs.run('ovs-appctl', ['-t', ctl, 'ofctl/barrier']);
  try {
    const deadline = Date.now() + READY_MS;
    while (!fs.existsSync(ctl) && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    if (!fs.existsSync(ctl)) throw new Error(`ovs-ofctl monitor did not start: ${stderr.trim() || 'no control socket'}`);
    barrier();
  } catch (e) {
    await kill();
    throw e;
  }
  return {
    async stop() {
      try {
        barrier(); // answered after every packet-in the switch sent before it
      } finally {
        await kill();
      }
      return parsePacketIns(`${stdout}\n${stderr}`);
    },
  };
}
