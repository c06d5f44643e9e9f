// Names numbered in the order they are added, found by name: a table's chains (114,000 at
// 10,000 Services). A Map keyed by the names does the same, but a lookup walks its bucket
// reading every name there, and 114,000 names made at different times lie all over a heap
// of a few hundred megabytes: most lookups of a new name were a few cache misses, some 60
// ms of a compile. Here each slot keeps its name's hash in a typed array next to the
// others, and a name is read only when the hashes are equal.

const EMPTY = -1;

// Names come from the cluster's objects: the hash starts from a value drawn per process,
// so that names made to share slots cannot be made in advance. (Which slot a name takes
// shows nowhere: numbers are given in the order names are added.)
const SEED = (0x811c9dc5 ^ (Math.random() * 0x100000000)) | 0;

/** FNV-1a over the UTF-16 code units of a name, from this process's seed. */
export function nameHash(s: string): number {
  let h = SEED;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/**
 * The slot a hash starts at in a table of 2 ** bits slots: its product with 2^32 over the
 * golden ratio, top bits. FNV's low bits depend only on the low bits of the characters;
 * the top bits of the product depend on all of them.
 */
export function firstSlot(h: number, bits: number): number {
  return Math.imul(h, 0x9e3779b1) >>> (32 - bits);
}

export class NameIndex {
  private readonly names: string[] = [];
  // Open addressing, linear probing, at most half full: the number of the name in each
  // slot (EMPTY for none) and the name's hash.
  private bits = 10;
  private numbers = new Int32Array(1 << this.bits).fill(EMPTY);
  private hashes = new Int32Array(1 << this.bits);

  get size(): number {
    return this.names.length;
  }

  /** The name's number, or -1 when it has none. */
  get(name: string): number {
    return this.numbers[this.slotOf(name, nameHash(name))];
  }

  has(name: string): boolean {
    return this.get(name) !== EMPTY;
  }

  /** The name's number, given it the next number (the size before) if it had none. */
  add(name: string): number {
    const h = nameHash(name);
    const slot = this.slotOf(name, h);
    if (this.numbers[slot] !== EMPTY) return this.numbers[slot];
    const number = this.names.length;
    this.names.push(name);
    this.numbers[slot] = number;
    this.hashes[slot] = h;
    if (2 * this.names.length > this.numbers.length) this.grow();
    return number;
  }

  /** The slot that holds the name, or the empty slot where it would go. */
  private slotOf(name: string, h: number): number {
    const { numbers, hashes, names } = this;
    const mask = numbers.length - 1;
    for (let slot = firstSlot(h, this.bits); ; slot = (slot + 1) & mask) {
      const n = numbers[slot];
      if (n === EMPTY || (hashes[slot] === h && names[n] === name)) return slot;
    }
  }

  private grow(): void {
    const { numbers, hashes } = this;
    this.bits++;
    this.numbers = new Int32Array(1 << this.bits).fill(EMPTY);
    this.hashes = new Int32Array(1 << this.bits);
    const mask = this.numbers.length - 1;
    for (let i = 0; i < numbers.length; i++) {
      if (numbers[i] === EMPTY) continue;
      let slot = firstSlot(hashes[i], this.bits);
      while (this.numbers[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.numbers[slot] = numbers[i];
      this.hashes[slot] = hashes[i];
    }
  }
}
