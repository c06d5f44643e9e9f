// Name rules as the Kubernetes API server applies them (apimachinery's validation
// package), plus Linux's rule for interface names. Each returns null when the text is
// valid, else why not, in words that fit after "FIELD: ".
//
// Every name that reaches the output (namespaces, Service and port names in chain names
// and comments, interface names in iifname matches) passes one of these first; their
// character sets hold nothing that nft or ovs-ofctl would read as syntax.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Namespaces, and the port names of Services, EndpointSlices and Endpoints: the API server
 * checks these port names as DNS-1123 labels (validateServicePort, validateEndpointPort),
 * not as the IANA service names that container ports and named targetPorts must be.
 */
export function dnsLabelProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > 63) return 'must be no more than 63 characters (a DNS-1123 label)';
  if (!DNS1123_LABEL.test(s)) return 'must be a DNS-1123 label: lower case letters, digits and "-", starting and ending with a letter or digit';
  return null;
}

/** Most object names: Nodes, EndpointSlices, ServiceCIDRs. */
export function dnsSubdomainProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > 253) return 'must be no more than 253 characters (a DNS-1123 subdomain)';
  if (!DNS1123_SUBDOMAIN.test(s)) return 'must be a DNS-1123 subdomain: lower case letters, digits, "-" and ".", starting and ending with a letter or digit';
  return null;
}

/** Service names: DNS-1035 labels (they become DNS names, so no leading digit). */
export function dns1035LabelProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > 63) return 'must be no more than 63 characters (a DNS-1035 label)';
  if (!DNS1035_LABEL.test(s)) return 'must be a DNS-1035 label: lower case letters, digits and "-", starting with a letter and ending with a letter or digit';
  return null;
}

/** A named targetPort: an IANA service name (RFC 6335), as a container port's name. */
export function ianaServiceNameProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > 15) return 'must be no more than 15 characters (an IANA service name)';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s)) return 'must be an IANA service name: lower case letters, digits and "-", starting and ending with a letter or digit';
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

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Label and annotation keys: an optional DNS-1123 subdomain prefix and "/", then a name of up to 63 characters. */
export function qualifiedNameProblem(s: string): string | null {
  const slash = s.indexOf('/');
  const prefix = slash === -1 ? undefined : s.slice(0, slash);
  const name = slash === -1 ? s : s.slice(slash + 1);
  if (prefix !== undefined) {
    if (prefix.length === 0) return 'must not start with "/" (a qualified name has a prefix before "/", or no "/")';
    const p = dnsSubdomainProblem(prefix);
    if (p) return `prefix ${p}`;
  }
  if (name.length === 0) return 'must have a name after the prefix (a qualified name)';
  if (name.length > 63) return 'name part must be no more than 63 characters (a qualified name)';
  if (!QUALIFIED_NAME.test(name)) {
    return 'must be a qualified name: letters, digits, "-", "_" and ".", starting and ending with a letter or digit, with an optional DNS-subdomain prefix and "/"';
  }
  return null;
}

/**
 * Network interface names as Linux takes them (dev_valid_name: fewer than IFNAMSIZ=16
 * bytes, no "/", ":" or white space, not "." or ".."), narrowed to the characters that
 * real interface names use. A prefix gets one byte less: nft matches it as the string
 * PREFIX* and refuses a string of 16 bytes or more (measured on nft 1.0.6).
 */
export function interfaceNameProblem(s: string, isPrefix: boolean): string | null {
  if (s.length === 0) return 'must not be empty';
  const max = isPrefix ? 14 : 15;
  if (s.length > max) return `must be no more than ${max} characters (${isPrefix ? 'an interface name prefix, matched as PREFIX*' : 'a Linux interface name'})`;
  if (s === '.' || s === '..') return 'must not be "." or ".."';
  if (!/^[A-Za-z0-9_.@+-]+$/.test(s)) return 'must be an interface name: letters, digits and "_", ".", "@", "+", "-"';
  return null;
}
