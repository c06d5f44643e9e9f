// The API server's ValidateNonSpecialIP, for endpoint addresses and external IPs: such an
// address makes no sense as a Service destination, and a link-local one would reach
// node-local services (a cloud's metadata server) through the proxy.
import type { IP } from '../net/ip.js';

function allZero(b: Uint8Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (b[i] !== 0) return false;
  return true;
}

/** null when the address may be used, else why not (fits after the address). */
export function specialIPProblem(ip: IP): string | null {
  const b = ip.bytes;
  if (allZero(b, b.length)) return 'may not be unspecified';
  if (ip.family === 4) {
    if (b[0] === 127) return 'may not be in the loopback range (127.0.0.0/8)';
    if (b[0] === 169 && b[1] === 254) return 'may not be in the link-local range (169.254.0.0/16)';
    if (b[0] === 224 && b[1] === 0 && b[2] === 0) return 'may not be in the link-local multicast range (224.0.0.0/24)';
    return null;
  }
  if (allZero(b, 15) && b[15] === 1) return 'may not be the loopback address (::1)';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return 'may not be in the link-local range (fe80::/10)';
  // Go's IsLinkLocalMulticast: ff02::/16 and every ffX2 scope.
  if (b[0] === 0xff && (b[1] & 0x0f) === 0x02) return 'may not be in the link-local multicast range (ff02::/16)';
  return null;
}
