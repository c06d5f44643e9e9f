// The hooks a packet crosses on the node, in the kernel's order. A packet arriving from
// outside: prerouting, then the route lookup on its (possibly DNATed) destination, then
// input when that is a local address, else forward and postrouting. A packet the node sends
// itself: output, route, postrouting; when its destination is local it loops back through
// prerouting and input, where NAT is not consulted again (the connection's NAT is already
// set) and the connection is confirmed. Within a hook, base chains run by priority; accept ends only the current base chain.
import { formatIP } from '../../net/ip.js';
import type { Hook } from '../../nft/objects.js';
import { hostPort } from '../packet.js';
import type { Branch } from '../result.js';
import { runChain } from './exec.js';
import type { Program } from './program.js';
import { isLocalAddress, record, type NodeEnv, type PacketState } from './state.js';

type Continue = (s: PacketState) => Branch[];

function finish(s: PacketState, end: 'accept' | 'drop' | 'reject'): Branch {
  const verdict = end !== 'accept' ? end : s.dnat ? 'dnat' : 'none';
  const b: Branch = { verdict, masquerade: s.masqueraded, path: s.path };
  if (s.dnat) b.endpoint = hostPort(s.dnat.ip, s.dnat.port);
  const written = [...s.added].flatMap(([set, keys]) => [...keys].map((key) => ({ set, key })));
  if (written.length > 0) b.affinity = written;
  return b;
}

function throughHook(p: Program, env: NodeEnv, hook: Hook, s: PacketState, natBound: boolean, then: Continue): Branch[] {
  const chains = p.baseChains(hook);
  const go = (k: number, st: PacketState): Branch[] => {
    if (k === chains.length) return then(st);
    const c = chains[k];
    st.hook = hook;
    if (natBound && c.spec.type === 'nat') {
      record(st, { chain: c.name, action: 'not consulted: the NAT of this connection was set when it left' });
      return go(k + 1, st);
    }
    return runChain(p, env, c.name, st).flatMap((o) =>
      o.end === 'drop' || o.end === 'reject' ? [finish(o.state, o.end)] : go(k + 1, o.state),
    );
  };
  return go(0, s);
}

function routeStep(s: PacketState, local: boolean, next: string): void {
  const where = local ? 'a local address' : 'not a local address';
  s.path.push({ hook: 'routing', action: `${formatIP(s.daddr)} is ${where}: ${next}` });
}

const delivered = (s: PacketState) => [finish(s, 'accept')];

function arriving(p: Program, env: NodeEnv, s: PacketState): Branch[] {
  return throughHook(p, env, 'prerouting', s, false, (st) => {
    if (isLocalAddress(env, st.daddr)) {
      routeStep(st, true, 'input');
      return throughHook(p, env, 'input', st, false, delivered);
    }
    routeStep(st, false, 'forward');
    return throughHook(p, env, 'forward', st, false, (f) => throughHook(p, env, 'postrouting', f, false, delivered));
  });
}

function sentByNode(p: Program, env: NodeEnv, s: PacketState): Branch[] {
  return throughHook(p, env, 'output', s, false, (st) => {
    const local = isLocalAddress(env, st.daddr);
    routeStep(st, local, local ? 'postrouting, then back in through loopback' : 'postrouting, out');
    return throughHook(p, env, 'postrouting', st, false, (out) => {
      if (!local) return delivered(out);
      // Back in through loopback: the connection was confirmed when its packet left.
      out.iif = 'lo';
      out.confirmed = true;
      return throughHook(p, env, 'prerouting', out, true, (back) => throughHook(p, env, 'input', back, true, delivered));
    });
  });
}

export function walk(p: Program, env: NodeEnv, s: PacketState, sentByTheNode: boolean): Branch[] {
  return sentByTheNode ? sentByNode(p, env, s) : arriving(p, env, s);
}
