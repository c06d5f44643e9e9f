// Numbers and IPv4 addresses written as ASCII digits straight into a byte buffer: the
// printers of large tables and the namer of endpoint chains write hundreds of thousands
// of them, and a string for each would be made only to be copied.

/** n (a whole number from 0 to 2^31 - 1) in decimal at `at`; returns where it ends. */
export function writeDecimal(buf: Uint8Array, at: number, n: number): number {
  if (n < 10) {
    buf[at] = 0x30 + n;
    return at + 1;
  }
  if (n < 100) {
    buf[at] = 0x30 + ((n / 10) | 0);
    buf[at + 1] = 0x30 + (n % 10);
    return at + 2;
  }
  let digits = 3;
  for (let x = (n / 1000) | 0; x > 0; x = (x / 10) | 0) digits++;
  const end = at + digits;
  for (let i = end - 1; i >= at; i--) {
    buf[i] = 0x30 + (n % 10);
    n = (n / 10) | 0;
  }
  return end;
}

/** An IPv4 address's 4 bytes, dotted, at `at`; returns where it ends. */
export function writeIPv4(buf: Uint8Array, at: number, bytes: Uint8Array): number {
  at = writeDecimal(buf, at, bytes[0]);
  for (let i = 1; i < 4; i++) {
    buf[at++] = 0x2e; // '.'
    at = writeDecimal(buf, at, bytes[i]);
  }
  return at;
}
