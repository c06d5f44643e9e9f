// A listing that fits in one string, parsed a batch of items at a time by JSON.parse
// itself: scanning every character in JavaScript (json-items.ts) and parsing each item on
// its own takes some three times as long. Batches end where nft starts a new item:
// `}, {"KIND": {"family": "` cannot stand inside a JSON string (its quotes would be
// escaped there), and a cut anywhere else would not parse. Positions are not known here;
// a listing with any problem is read again by the splitter, which knows them.

/** The `{"nftables": [` before the items and the `]}` after them; null when not that shape. */
export function itemsRange(text: string): { start: number; end: number } | null {
  const open = /^\s*\{\s*"nftables"\s*:\s*\[\s*/.exec(text.slice(0, 200));
  const close = /\s*\]\s*\}\s*$/.exec(text.slice(Math.max(0, text.length - 200)));
  if (!open || !close) return null;
  const start = open[0].length;
  const end = text.length - close[0].length;
  return start <= end ? { start, end } : null;
}

const BATCH_CHARS = 1 << 20;
// Where nft starts an item after another: the end of the last one, and a new kind whose
// body begins with its family.
const ITEM_START = /\}, \{"[a-z ]+": \{"family": "/g;

/**
 * The items of the listing, batch by batch; null (at any point) when the text is not
 * plain `nft -j` output that this can cut: the caller then reads it with the splitter.
 */
export function* itemBatches(text: string): Generator<unknown[] | null> {
  const range = itemsRange(text);
  if (!range) {
    yield null;
    return;
  }
  let p = range.start;
  while (p < range.end) {
    let end = range.end;
    if (range.end - p > BATCH_CHARS) {
      ITEM_START.lastIndex = p + BATCH_CHARS;
      const m = ITEM_START.exec(text);
      if (!m || m.index >= range.end) {
        yield null; // not nft's own spacing: no place to cut
        return;
      }
      end = m.index + 1; // after the item's closing brace
    }
    let items: unknown;
    try {
      items = JSON.parse(`[${text.slice(p, end)}]`);
    } catch {
      yield null;
      return;
    }
    yield items as unknown[];
    // Past ", " to the next item's opening brace.
    p = end;
    while (p < range.end && (text.charCodeAt(p) === 0x2c || text.charCodeAt(p) === 0x20)) p++;
  }
}
