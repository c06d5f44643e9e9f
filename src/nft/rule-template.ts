// Rules made once per endpoint, the same but for one address and one port (the rules of
// every endpoint chain: 200,000 of 250,000 rules at 10,000 Services). A table that keeps
// statements makes them as usual; a table kept only as text prints the statements around
// the address and the port once, and then each rule is those pieces with the address and
// the port printed between them.
import { InternalError } from '../diag/diagnostic.js';
import { formatIP, ipFromBytes, parseIP, type IP } from '../net/ip.js';
import type { Stmt } from './expr.js';
import { StringOut, type TextOut } from './expr-text.js';
import { writeRuleBody } from './text.js';

export class AddressPortRule {
  /** make(ip, port): the rule's statements; they may use ip and port only as values. */
  constructor(readonly make: (ip: IP, port: number) => Stmt[]) {}
}

/** A rule's text in pieces: text, or where the address or the port goes. */
export type RulePieces = (string | typeof ADDRESS | typeof PORT)[];
export const ADDRESS = 0;
export const PORT = 1;

// Values no rule holds, recognised where the printer prints them. An address is told by
// identity (one of each family: IPv6 addresses print differently in places); the port is
// outside the range of ports.
const MARK_ADDRESS: Record<4 | 6, IP> = { 4: ipFromBytes(4, new Uint8Array(4)), 6: ipFromBytes(6, new Uint8Array(16)) };
const MARK_PORT = -7;

/**
 * The rule's text in pieces for addresses of ip's family, checked against the rule
 * printed as usual for its first use and for one more address and port: a template whose
 * statements showed the address or the port other than as values (in a name, say) would
 * make pieces that do not add up.
 */
export function rulePieces(t: AddressPortRule, ip: IP, port: number): RulePieces {
  const rec = new PieceRecorder(MARK_ADDRESS[ip.family]);
  writeRuleBody(rec, t.make(MARK_ADDRESS[ip.family], MARK_PORT));
  const pieces = rec.finish();
  for (const [a, p] of [[ip, port], [OTHER_ADDRESS[ip.family], OTHER_PORT]] as const) {
    const usual = new StringOut();
    writeRuleBody(usual, t.make(a, p));
    const filled = filledText(pieces, a, p);
    if (filled !== usual.text) throw new InternalError(`rule template prints ${JSON.stringify(filled)}, not ${JSON.stringify(usual.text)}`);
  }
  return pieces;
}

/** The rule's text for an address and a port, as one flat string (see StringOut). */
function filledText(pieces: RulePieces, ip: IP, port: number): string {
  const parts: string[] = new Array(pieces.length);
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i];
    parts[i] = p === ADDRESS ? formatIP(ip) : p === PORT ? String(port) : p;
  }
  return parts.join('');
}

// The second check's values (documentation addresses).
const OTHER_ADDRESS: Record<4 | 6, IP> = { 4: parseIP('203.0.113.7')!, 6: parseIP('2001:db8::7')! };
const OTHER_PORT = 4321;

class PieceRecorder implements TextOut {
  private readonly pieces: RulePieces = [];
  private text = '';
  constructor(private readonly mark: IP) {}
  str(s: string): void {
    this.text += s;
  }
  name(s: string): void {
    this.text += s;
  }
  num(n: number): void {
    if (n === MARK_PORT) this.hole(PORT);
    else this.text += String(n);
  }
  ip(ip: IP): void {
    if (ip === this.mark) this.hole(ADDRESS);
    else this.text += formatIP(ip);
  }
  private hole(h: typeof ADDRESS | typeof PORT): void {
    if (this.text) this.pieces.push(this.text);
    this.text = '';
    this.pieces.push(h);
  }
  finish(): RulePieces {
    if (this.text) this.pieces.push(this.text);
    return this.pieces;
  }
}
