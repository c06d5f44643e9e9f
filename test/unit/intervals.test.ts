import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import { formatCIDR, parseCIDR, parseIP } from '../../src/net/ip.js';
import { bigToIP, cidrInterval, ipToBig, mergeIntervals, rangeToCIDRs } from '../../src/nft/intervals.js';

const cidrs = (lo: string, hi: string) => rangeToCIDRs(parseIP(lo)!, parseIP(hi)!).map(formatCIDR);

describe('address intervals', () => {
  it('covers a range with the fewest CIDRs', () => {
    expect(cidrs('9.0.0.0', '10.255.255.255')).toEqual(['9.0.0.0/8', '10.0.0.0/8']);
    expect(cidrs('10.0.0.0', '10.0.2.255')).toEqual(['10.0.0.0/23', '10.0.2.0/24']);
    expect(cidrs('10.0.0.1', '10.0.0.1')).toEqual(['10.0.0.1/32']);
    expect(cidrs('0.0.0.0', '255.255.255.255')).toEqual(['0.0.0.0/0']);
    expect(cidrs('2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual(['2001:db8::/32']);
  });

  it('merges overlapping and adjacent intervals, as nft does', () => {
    const iv = (s: string) => cidrInterval(parseCIDR(s)!.cidr);
    expect(mergeIntervals([iv('10.0.1.0/24'), iv('10.0.0.0/24'), iv('10.0.0.7/32'), iv('1.2.3.4/32')])).toEqual([
      iv('1.2.3.4/32'),
      { lo: iv('10.0.0.0/24').lo, hi: iv('10.0.1.0/24').hi },
    ]);
  });

  it('covers any range exactly (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const out = rangeToCIDRs(bigToIP(lo, 4), bigToIP(hi, 4)).map(cidrInterval);
        expect(out[0].lo).toBe(lo);
        expect(out[out.length - 1].hi).toBe(hi);
        out.slice(1).forEach((c, i) => expect(c.lo).toBe(out[i].hi + 1n));
        expect(out.length).toBeLessThanOrEqual(62);
        expect(ipToBig(bigToIP(lo, 4))).toBe(lo);
      }),
      fcParams(100),
    );
  });
});
