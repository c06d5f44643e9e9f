// JSON input through V8's JSON.parse, which is some fifty times faster than reading it as
// YAML. JSON is YAML, and for JSON text the `yaml` package gives the same value as
// JSON.parse except where YAML is stricter: a key given twice (an error in YAML, the last
// one wins in JSON), and a few characters and shapes the YAML reader treats on its own.
// Those cases go to the full parser, which reports them with positions.
import { FAST_MAX_DEPTH } from './fast-yaml.js';

const MAX_KEY_LENGTH = 1000;
// Whitespace and characters that YAML reads differently from JSON, or may refuse.
const NOT_FAST_CHARS = /[\t\r\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;

const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** How many object keys the text holds: strings followed by ":" (the text is valid JSON). */
function keysInText(text: string): number {
  let keys = 0;
  const n = text.length;
  for (let i = text.indexOf('"'); i !== -1 && i < n; i = text.indexOf('"', i)) {
    // Skip to the closing quote.
    let j = i + 1;
    for (;;) {
      j = text.indexOf('"', j);
      let backslashes = 0;
      while (text.charCodeAt(j - 1 - backslashes) === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) break;
      j++;
    }
    let k = j + 1;
    while (k < n) {
      const c = text.charCodeAt(k);
      if (c !== 0x20 && c !== 0x0a) break;
      k++;
    }
    if (text.charCodeAt(k) === COLON) keys++;
    i = k;
  }
  return keys;
}

/**
 * Counts the keys of every object, and whether some key's value is null; null when a key or
 * the nesting is outside the fast path.
 */
function keysInValue(root: unknown): { keys: number; nullField: boolean } | null {
  let keys = 0;
  let nullField = false;
  const stack: unknown[] = [root];
  const depths: number[] = [0];
  while (stack.length > 0) {
    const v = stack.pop();
    const depth = depths.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= FAST_MAX_DEPTH) return null;
    if (Array.isArray(v)) {
      for (const x of v) {
        if (x !== null && typeof x === 'object') {
          stack.push(x);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const k in v) {
      if (k.length > MAX_KEY_LENGTH || k === '__proto__') return null;
      keys++;
      const x = (v as Record<string, unknown>)[k];
      if (x === null) nullField = true;
      else if (typeof x === 'object') {
        stack.push(x);
        depths.push(depth + 1);
      }
    }
    if (Object.prototype.hasOwnProperty.call(v, '__proto__')) return null;
  }
  return { keys, nullField };
}

/**
 * The value of a JSON text holding one object, as the `yaml` package would read it; null
 * when the text should be read by the full parser (not JSON, a repeated key, not an object,
 * or anything else YAML might read differently).
 */
export function fastJson(text: string): { value: Record<string, unknown>; nullField: boolean } | null {
  if (NOT_FAST_CHARS.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const counted = keysInValue(value);
  // Fewer keys in the value than in the text: some key was given twice.
  if (counted === null || counted.keys !== keysInText(text)) return null;
  return { value: value as Record<string, unknown>, nullField: counted.nullField };
}
