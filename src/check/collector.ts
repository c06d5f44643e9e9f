// A per-object problem reporter: rules push problems with a field path, and the collector
// turns them into positioned diagnostics.
import type { Diagnostic, Severity } from '../diag/diagnostic.js';
import type { FieldPath, SourceObject } from '../input/source.js';
import { formatCIDR, formatIP, isIPv4Mapped, parseCIDR, parseIP, type CIDR, type IP, type IPFamily } from '../net/ip.js';
import { fieldPathText } from '../schema/validate.js';

export class Reporter {
  constructor(
    readonly diagnostics: Diagnostic[],
    readonly source: SourceObject,
    readonly kind: string,
    readonly object: string | undefined,
  ) {}

  report(path: FieldPath, message: string, severity: Severity = 'error'): void {
    this.diagnostics.push({
      severity,
      pos: this.source.locate(path),
      kind: this.kind,
      object: this.object,
      field: path.length ? fieldPathText(path) : undefined,
      message,
    });
  }

  warn(path: FieldPath, message: string): void {
    this.report(path, message, 'warning');
  }

  /** An IP address in canonical form, of the given family when one is required. */
  ip(path: FieldPath, text: string, family?: IPFamily): IP | null {
    const ip = parseIP(text);
    if (!ip || isIPv4Mapped(ip)) {
      this.report(path, `${JSON.stringify(text)} is not a valid IP address`);
      return null;
    }
    const canonical = formatIP(ip);
    if (canonical !== text) {
      this.report(path, `${JSON.stringify(text)} is not in canonical form (write ${canonical})`);
      return null;
    }
    if (family && ip.family !== family) {
      this.report(path, `${text} is an IPv${ip.family} address where IPv${family} is required`);
      return null;
    }
    return ip;
  }

  /** A CIDR; with `strict`, the address must be the network itself. */
  cidr(path: FieldPath, text: string, strict: boolean): CIDR | null {
    const parsed = parseCIDR(text);
    if (!parsed || isIPv4Mapped(parsed.cidr.addr)) {
      this.report(path, `${JSON.stringify(text)} is not a valid CIDR`);
      return null;
    }
    if (strict && parsed.hostBitsSet) {
      this.report(path, `${text} has host bits set (the network is ${formatCIDR(parsed.cidr)})`);
      return null;
    }
    return parsed.cidr;
  }
}
