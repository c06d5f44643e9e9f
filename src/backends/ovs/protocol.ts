// A Service port's protocol in the pipeline's terms: its match word, its IP protocol number
// and the field a learn action copies its destination port from.
import type { Protocol } from '../../model/types.js';
import type { MatchField } from '../../ovs/openflow.js';
import type { OvsFamily } from '../../ovs/pipeline.js';

const PROTO_WORD = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' } as const;
const IP_PROTO: Record<Protocol, number> = { TCP: 6, UDP: 17, SCTP: 132 };
const LEARN_DST_PORT: Record<Protocol, string> = { TCP: 'NXM_OF_TCP_DST[]', UDP: 'NXM_OF_UDP_DST[]', SCTP: 'OXM_OF_SCTP_DST[]' };

/** `tcp`, `udp6`, ...: the protocol word that also implies the family. */
export function protoWord(fam: OvsFamily, p: Protocol): MatchField {
  return { t: 'proto', word: fam.family === 4 ? PROTO_WORD[p] : `${PROTO_WORD[p]}6` };
}

export function ipProtoNumber(p: Protocol): number {
  return IP_PROTO[p];
}

export function learnDstPortField(p: Protocol): string {
  return LEARN_DST_PORT[p];
}
