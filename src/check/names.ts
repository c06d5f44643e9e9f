// Name rules as the Kubernetes API server applies them (apimachinery validation).

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** null when valid, else why not. */
export function dnsLabelProblem(s: string): string | null {
  if (s.length > 63) return 'must be no more than 63 characters (a DNS-1123 label)';
  if (!DNS1123_LABEL.test(s)) return 'must be a DNS-1123 label: lower case letters, digits and "-", starting and ending with a letter or digit';
  return null;
}

export function dnsSubdomainProblem(s: string): string | null {
  if (s.length > 253) return 'must be no more than 253 characters (a DNS-1123 subdomain)';
  if (!DNS1123_SUBDOMAIN.test(s)) return 'must be a DNS-1123 subdomain: lower case letters, digits, "-" and ".", starting and ending with a letter or digit';
  return null;
}

/** Service port names are IANA service names (RFC 6335) when a Service has several ports. */
export function portNameProblem(s: string): string | null {
  if (s.length > 15) return 'must be no more than 15 characters (an IANA service name)';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s)) return 'must be an IANA service name: lower case letters, digits and "-"';
  if (!/[a-z]/.test(s)) return 'must contain at least one letter (an IANA service name)';
  if (s.includes('--')) return 'must not contain consecutive hyphens (an IANA service name)';
  return null;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
export function labelValueProblem(s: string): string | null {
  if (s.length > 63) return 'must be no more than 63 characters (a label value)';
  if (!LABEL_VALUE.test(s)) return 'must be a label value: letters, digits, "-", "_" and ".", starting and ending with a letter or digit';
  return null;
}

/** Network interface names as Linux takes them (IFNAMSIZ 16, no "/" or white space). */
export function interfaceNameProblem(s: string, isPrefix: boolean): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > (isPrefix ? 14 : 15)) return 'is longer than a Linux interface name allows';
  if (!/^[A-Za-z0-9_.:@+-]+$/.test(s)) return 'must be an interface name: letters, digits and "_.:@+-"';
  return null;
}
