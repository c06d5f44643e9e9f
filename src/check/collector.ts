// A per-object problem reporter: rules push problems with a field path, and the collector
// turns them into positioned diagnostics. It counts the object's errors, so a decoder
// keeps an object only when none was found, and it stays quiet below a field the schema
// already refused (one problem, one line).
import { quoteText, type Diagnostic, type Severity } from '../diag/diagnostic.js';
import type { FieldPath, SourceObject } from '../input/source.js';
import { formatCIDR, formatIP, isIPv4Mapped, parseCIDR, parseIP, parseIPSloppy, type CIDR, type IP, type IPFamily } from '../net/ip.js';
import { fieldPathText } from '../schema/validate.js';
import { specialIPProblem } from './ip-rules.js';

export interface IPRule {
  /** The family the field requires (an EndpointSlice's addressType, a Service's ipFamilies). */
  family?: IPFamily;
  /** Refuse unspecified, loopback and link-local addresses, as the API server does for endpoints and external IPs. */
  nonSpecial?: boolean;
}

function startsWith(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((k, i) => String(k) === String(path[i]));
}

/**
 * The address when Reporter.ip would take the value without a word, else null (and
 * Reporter.ip, given the field's path, says why). Hot loops call this first, so that a
 * path is built only for a value with a problem.
 */
export function acceptedIP(value: unknown, rule: IPRule): IP | null {
  if (typeof value !== 'string') return null;
  const ip = parseIP(value);
  if (!ip || (rule.family !== undefined && ip.family !== rule.family)) return null;
  // An IPv4 address that parses is canonical: four decimal parts without leading zeros.
  if (ip.family === 6 && (isIPv4Mapped(ip) || formatIP(ip) !== value)) return null;
  return rule.nonSpecial && specialIPProblem(ip) !== null ? null : ip;
}

/** The CIDR when Reporter.cidr would take the value without a word, else null (as acceptedIP). */
export function acceptedCIDR(value: unknown, strict: boolean): CIDR | null {
  if (typeof value !== 'string') return null;
  const parsed = parseCIDR(value);
  if (!parsed || (strict && parsed.hostBitsSet)) return null;
  const addr = parsed.cidr.addr;
  if (addr.family === 6) {
    if (isIPv4Mapped(addr)) return null;
    const slash = value.indexOf('/');
    const ip = parseIP(value.slice(0, slash))!;
    if (formatIP(ip) !== value.slice(0, slash)) return null;
  }
  return parsed.cidr;
}

export class Reporter {
  /** Errors reported for this object, including those the schema found and those kept quiet. */
  errors: number;

  constructor(
    readonly diagnostics: Diagnostic[],
    readonly source: SourceObject,
    readonly kind: string,
    readonly object: string | undefined,
    /** Fields the schema refused; problems at or below them are already reported. */
    readonly refused: FieldPath[] = [],
  ) {
    this.errors = refused.length;
  }

  get ok(): boolean {
    return this.errors === 0;
  }

  /** `atKey` points at the key of the last map entry of the path (a bad label key) rather than its value. */
  report(path: FieldPath, message: string, severity: Severity = 'error', atKey = false): void {
    if (severity === 'error') this.errors++;
    if (this.refused.some((p) => startsWith(path, p))) return;
    this.diagnostics.push({
      severity,
      pos: this.source.locate(path, { key: atKey }),
      kind: this.kind,
      object: this.object,
      field: path.length ? fieldPathText(path) : undefined,
      message,
    });
  }

  warn(path: FieldPath, message: string): void {
    this.report(path, message, 'warning');
  }

  /** A string field, or a problem: the schema should have caught it, but a value that is not text is never read as text. */
  text(path: FieldPath, value: unknown): string | null {
    if (typeof value === 'string') return value;
    this.report(path, 'must be of type string');
    return null;
  }

  /**
   * An IP address, of the given family when one is required. One not in canonical form
   * (IPv6 in capitals or uncompressed, IPv4 with leading zeros) is read as kube-proxy
   * reads it, with a warning: the API server refuses it in new objects, but older ones
   * hold it and kube-proxy programs it.
   */
  ip(path: FieldPath, value: unknown, rule: IPRule = {}): IP | null {
    const text = this.text(path, value);
    if (text === null) return null;
    const ip = parseIPSloppy(text);
    if (!ip || isIPv4Mapped(ip)) {
      this.report(path, `${quoteText(text)} is not a valid IP address`);
      return null;
    }
    const canonical = formatIP(ip);
    if (canonical !== text) this.warn(path, `${quoteText(text)} is not in canonical form: read as ${canonical}, as kube-proxy reads it (write ${canonical})`);
    if (rule.family && ip.family !== rule.family) {
      this.report(path, `${canonical} is an IPv${ip.family} address where IPv${rule.family} is required`);
      return null;
    }
    const special = rule.nonSpecial ? specialIPProblem(ip) : null;
    if (special) {
      this.report(path, `${canonical} ${special}`);
      return null;
    }
    return ip;
  }

  /** A CIDR in canonical form; with `strict`, the address must be the network itself. */
  cidr(path: FieldPath, value: unknown, strict: boolean): CIDR | null {
    const text = this.text(path, value);
    if (text === null) return null;
    const parsed = parseCIDR(text, true);
    if (!parsed || isIPv4Mapped(parsed.cidr.addr)) {
      this.report(path, `${quoteText(text)} is not a valid CIDR`);
      return null;
    }
    if (strict && parsed.hostBitsSet) {
      this.report(path, `${text} has host bits set (the network is ${formatCIDR(parsed.cidr)})`);
      return null;
    }
    // The address part should be canonical too (only the host bits may differ from the
    // network); one that is not is read as kube-proxy reads it, as for an address.
    const slash = text.indexOf('/');
    const addr = parseIPSloppy(text.slice(0, slash))!;
    if (formatIP(addr) !== text.slice(0, slash)) {
      this.warn(path, `${quoteText(text)} is not in canonical form: read as ${formatCIDR(parsed.cidr)}, as kube-proxy reads it (write ${formatIP(addr)}${text.slice(slash)})`);
    }
    return parsed.cidr;
  }
}
