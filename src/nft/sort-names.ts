// The order Array.prototype.sort() puts names in (by UTF-16 code units), found without
// comparing names: 110,000 chain names at 10,000 Services, spread over a heap of a few
// hundred megabytes, make each of the ~2,000,000 comparisons of a sort two cache misses.
// Here each name is read a few times, a few characters at a time, into a number; the
// numbers are sorted by the engine's native sort of a Float64Array, in cache.

// A key is four characters, each as its code + 1 (0 past the end), above the position in
// the range: 32 + 20 bits, exact in a double. Longer ranges, or codes above 254, are
// sorted by comparing.
const KEY_CHARS = 4;
const POSITION_BITS = 20;
const POSITIONS = 2 ** POSITION_BITS;
const MAX_CODE = 254;
// Ranges this short are sorted by comparing the names.
const SHORT = 16;

/** Indices of names in the order [...names].sort() puts the names (equal names by index). */
export function sortedOrder(names: readonly string[]): Int32Array {
  const n = names.length;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n > POSITIONS || !new KeySort(names, n).sort(order, 0, n, 0)) {
    order.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : a - b));
  }
  return order;
}

/** The items in the order of their names (distinct ones: equal names keep their order). */
export function inNameOrder<T>(items: T[], name: (item: T) => string): T[] {
  return Array.from(sortedOrder(items.map(name)), (i) => items[i]);
}

class KeySort {
  private readonly keys: Float64Array;
  private readonly moved: Int32Array;

  constructor(
    private readonly names: readonly string[],
    n: number,
  ) {
    this.keys = new Float64Array(n);
    this.moved = new Int32Array(n);
  }

  /**
   * Sorts order[from..to), whose names agree on their first `depth` characters. False when
   * a name has a character it cannot key (the order is then unfinished). Each loop is a
   * function of its own: the first call, over all names, runs before the engine has
   * optimized anything, and a loop optimized on the way leaves its function right after.
   */
  sort(order: Int32Array, from: number, to: number, depth: number): boolean {
    if (to - from < SHORT) {
      this.insertionSort(order, from, to);
      return true;
    }
    depth += this.sharedPrefix(order, from, to, depth);
    if (!this.fillKeys(order, from, to, depth)) return false;
    this.keys.subarray(from, to).sort();
    this.reorder(order, from, to);
    return this.sortTies(order, from, to, depth);
  }

  /** Each name's key at `depth`, above its position in the range. */
  private fillKeys(order: Int32Array, from: number, to: number, depth: number): boolean {
    const { keys, names } = this;
    for (let i = from; i < to; i++) {
      const k = key(names[order[i]], depth);
      if (k < 0) return false;
      keys[i] = k * POSITIONS + (i - from);
    }
    return true;
  }

  /** order[from..to) as the sorted keys say. */
  private reorder(order: Int32Array, from: number, to: number): void {
    const { keys, moved } = this;
    for (let i = from; i < to; i++) moved[i] = order[from + (keys[i] % POSITIONS)];
    order.set(moved.subarray(from, to), from);
  }

  /**
   * Names with the same key are sorted by their next characters, unless they ended. (The
   * recursion overwrites keys of its own range only, which are read already.)
   */
  private sortTies(order: Int32Array, from: number, to: number, depth: number): boolean {
    const keys = this.keys;
    for (let i = from; i < to; ) {
      const k = Math.floor(keys[i] / POSITIONS);
      let j = i + 1;
      while (j < to && Math.floor(keys[j] / POSITIONS) === k) j++;
      if (j - i > 1 && k % 256 !== 0 && !this.sort(order, i, j, depth + KEY_CHARS)) return false;
      i = j;
    }
    return true;
  }

  /** How many characters from `depth` on all names of the range share. */
  private sharedPrefix(order: Int32Array, from: number, to: number, depth: number): number {
    const first = this.names[order[from]];
    let shared = first.length - depth;
    for (let i = from + 1; i < to && shared > 0; i++) {
      const s = this.names[order[i]];
      let k = 0;
      while (k < shared && depth + k < s.length && s.charCodeAt(depth + k) === first.charCodeAt(depth + k)) k++;
      shared = k;
    }
    return Math.max(0, shared);
  }

  private insertionSort(order: Int32Array, from: number, to: number): void {
    const names = this.names;
    for (let i = from + 1; i < to; i++) {
      const x = order[i];
      const s = names[x];
      let j = i - 1;
      while (j >= from && names[order[j]] > s) {
        order[j + 1] = order[j];
        j--;
      }
      order[j + 1] = x;
    }
  }
}

/** Characters at..at+3 as a 32-bit number, code + 1 each (0 past the end); -1 for a code above MAX_CODE. */
function key(s: string, at: number): number {
  let k = 0;
  for (let i = at; i < at + KEY_CHARS; i++) {
    const c = i < s.length ? s.charCodeAt(i) : -1;
    if (c > MAX_CODE) return -1;
    k = k * 256 + (c + 1);
  }
  return k;
}
