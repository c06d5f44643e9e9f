// Output made as it is written: chunks of bytes, each ending at a line end, handed to a
// sink one at a time. Both backends print through it (the nftables text table's lines,
// the ovs bundle's lines).

// Chunks of about this many bytes are handed over.
const CHUNK_BYTES = 1 << 18;
// Gathered lines are joined and copied when they reach this many bytes: a larger string
// would be made in the old generation, where it stays until a full collection.
const GATHER_BYTES = 1 << 15;

/** Hands chunks of bytes over one at a time; each is valid only until the sink returns. */
export type ByteSink = (chunk: Uint8Array) => void;

/** Output that is written as it is made: chunks of bytes handed to a sink, one at a time. */
export type ChunkWriter = (sink: ByteSink) => void;

/**
 * Lines as bytes, one character each (latin1), turned into chunks of bytes that each end
 * at a line end, written into one buffer used again for every chunk. A large ruleset is
 * hundreds of megabytes: it is never one string, and it never piles up as buffers either
 * (V8 counts their memory and answers with full collections of the heap).
 */
export class ByteChunks {
  private buf = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  private at = 0;
  private gathered: string[] = [];
  private gatheredLength = 0;

  constructor(private readonly sink: ByteSink) {}

  /** Appends part of a line. */
  bytes(s: string): void {
    this.gathered.push(s);
    this.gatheredLength += s.length;
  }

  /** Appends lines, the last one's line end included. */
  lines(s: string): void {
    this.gathered.push(s);
    if ((this.gatheredLength += s.length) >= GATHER_BYTES) this.copyGathered();
  }

  /** Appends a line of any text, and its line end: encoded straight into the chunk. */
  textLine(s: string): void {
    if (this.gatheredLength > 0) this.copyGathered();
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    this.reserve(3 * s.length + 1);
    this.at += this.buf.write(s, this.at, 'utf8');
    this.buf[this.at++] = 0x0a;
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  finish(): void {
    this.copyGathered();
    this.flush();
  }

  private copyGathered(): void {
    if (this.gatheredLength === 0) return;
    const s = this.gathered.join('');
    this.gathered = [];
    this.gatheredLength = 0;
    this.reserve(s.length);
    this.at += this.buf.write(s, this.at, 'latin1');
    if (this.at >= CHUNK_BYTES) this.flush();
  }

  /**
   * Room for n more bytes: what the buffer holds is handed over first if need be (it
   * ends at a line end, as everything written into it does), and lines longer than the
   * buffer get a larger one.
   */
  private reserve(n: number): void {
    if (this.at + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private flush(): void {
    if (this.at === 0) return;
    this.sink(this.buf.subarray(0, this.at));
    this.at = 0;
  }
}
