import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from '../helpers/fc-runs.js';
import { cidrContains, formatCIDR, formatIP, parseCIDR, parseIP } from '../../src/net/ip.js';

describe('IP parsing and printing', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['fd00:10:180::1', 'fd00:10:180::1'],
    ['FD00:0010:0096:0000:0000:0000:0000:0041', 'fd00:10:96::41'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8::0:1', '2001:db8::1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::ffff:1.2.3.4', '::ffff:102:304'],
  ])('%s prints as %s', (input, canonical) => {
    expect(formatIP(parseIP(input)!)).toBe(canonical);
  });

  it.each(['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.4 ', ' 1.2.3.4', '1::2::3', 'g::1', '1:2:3:4:5:6:7:8:9', '1.2.3.4/8', 'a;b'])(
    'rejects %j',
    (input) => {
      expect(parseIP(input)).toBeNull();
    },
  );

  it('reads IPv4 exactly as four dotted 0-255 parts without leading zeros', () => {
    const part = /^(0|[1-9][0-9]{0,2})$/;
    const reference = (t: string) => {
      const parts = t.split('.');
      return parts.length === 4 && parts.every((p) => part.test(p) && Number(p) <= 255) ? parts.map(Number) : null;
    };
    const text = fc.oneof(
      fc.stringMatching(/^[0-9.]{0,16}$/),
      fc.array(fc.nat({ max: 300 }), { minLength: 3, maxLength: 5 }).map((xs) => xs.join('.')),
      fc.string({ maxLength: 16 }).filter((t) => !t.includes(':')),
    );
    fc.assert(
      fc.property(text, (t) => {
        const ip = parseIP(t);
        expect(ip ? [...ip.bytes] : null).toEqual(reference(t));
      }),
      fcParams(3000),
    );
  });

  it('parses CIDRs and masks host bits', () => {
    const p = parseCIDR('10.1.2.3/8')!;
    expect(formatCIDR(p.cidr)).toBe('10.0.0.0/8');
    expect(p.hostBitsSet).toBe(true);
    expect(parseCIDR('10.0.0.0/8')!.hostBitsSet).toBe(false);
    expect(formatCIDR(parseCIDR('fd00:10::1/64')!.cidr)).toBe('fd00:10::/64');
    expect(parseCIDR('10.0.0.0/33')).toBeNull();
    expect(parseCIDR('10.0.0.0/08')).toBeNull();
    expect(parseCIDR('10.0.0.0')).toBeNull();
  });

  it('contains', () => {
    const c = parseCIDR('192.168.0.0/16')!.cidr;
    expect(cidrContains(c, parseIP('192.168.3.4')!)).toBe(true);
    expect(cidrContains(c, parseIP('192.169.0.1')!)).toBe(false);
    expect(cidrContains(c, parseIP('::1')!)).toBe(false);
    expect(cidrContains(parseCIDR('0.0.0.0/0')!.cidr, parseIP('1.2.3.4')!)).toBe(true);
  });

  it('keeps the bytes of every address apart when many are parsed', () => {
    // Addresses share blocks of memory: each must keep its own bytes, across block ends too.
    const texts = Array.from({ length: 9000 }, (_, i) => (i % 3 === 2 ? `fd00::${((i * 7919) % 65536).toString(16)}:1` : `10.${i >> 8}.${i & 255}.${i % 250}`));
    const ips = texts.map((t) => parseIP(t)!);
    expect(ips.map((ip) => formatIP(ip))).toEqual(texts.map((t) => formatIP(parseIP(t)!)));
    for (const ip of ips) expect(ip.bytes.length).toBe(ip.family === 4 ? 4 : 16);
    expect(parseIP('1.2.3.4')).toEqual({ family: 4, bytes: new Uint8Array([1, 2, 3, 4]) });
    expect(parseIP('1.2.3')).toBeNull();
  });
});
