// Reading fields of an object that may have failed its schema: a value of the wrong type
// reads as absent (the schema has reported it), so the decoders still check every other
// field of the object and a run reports all of its problems.

export type Fields = Record<string, unknown>;

export function isFields(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

// What an absent or mistyped mapping or list reads as: shared, since readers never write.
const NO_FIELDS: Fields = Object.freeze({});
const NO_ITEMS: unknown[] = Object.freeze([]) as unknown as unknown[];

/** A mapping, or an empty one. */
export function fields(v: unknown): Fields {
  return isFields(v) ? v : NO_FIELDS;
}

/** A list, or an empty one. */
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : NO_ITEMS;
}

/** A string, or undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** An integer, or undefined. */
export function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/** A boolean, or undefined. */
export function bool(v: unknown): boolean | undefined {
  return typeof v === 'boolean' ? v : undefined;
}

/** The string entries of a mapping (labels, annotations). */
export function stringMap(v: unknown): Record<string, string> {
  const m = fields(v);
  const keys = Object.keys(m);
  let allStrings = keys.length > 0;
  for (let i = 0; i < keys.length && allStrings; i++) allStrings = typeof m[keys[i]] === 'string';
  // Usually every entry is a string: then the mapping itself is the answer (parsed values
  // are plain objects whose keys are all their own).
  if (allStrings) return m as Record<string, string>;
  // fromEntries defines own properties, so a key such as "__proto__" stays a plain key.
  return Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
