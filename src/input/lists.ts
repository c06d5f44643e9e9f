// Documents that hold a list of objects: `kind: List` (any apiVersion, as `kubectl get -o
// yaml` prints it), whose items carry their own kind and apiVersion; and the typed lists
// the API server returns for a list request (`ServiceList`, `EndpointSliceList`, ... from
// `kubectl get --raw`, client libraries, saved API responses), whose items carry neither
// and take them from the list: kind `XList` holds objects of kind `X` in its apiVersion.

/** Typed lists whose items kproxc reads: with no `items` at all they are empty, not unknown objects. */
const READ_LISTS = new Set(['ServiceList', 'EndpointSliceList', 'EndpointsList', 'NodeList', 'ServiceCIDRList']);

export interface ListForm {
  /** For a typed list: the kind and apiVersion its items take when they give none. */
  itemKind?: string;
  itemApiVersion?: unknown;
}

/**
 * How a document holds objects: null when it is one object itself. A kind ending in
 * "List" is a typed list when it has an `items` array (or is one kproxc reads), as the
 * API's conventions make every list kind.
 */
export function listForm(obj: Record<string, unknown>): ListForm | null {
  const kind = obj.kind;
  if (kind === 'List') return {};
  if (typeof kind !== 'string' || kind.length <= 4 || !kind.endsWith('List')) return null;
  if (!Array.isArray(obj.items) && !READ_LISTS.has(kind)) return null;
  return { itemKind: kind.slice(0, -4), itemApiVersion: obj.apiVersion };
}

/** An item of a list as an object of its own: a typed list's items get its kind and apiVersion. */
export function listItem(form: ListForm, item: unknown): unknown {
  if (form.itemKind === undefined || item === null || typeof item !== 'object' || Array.isArray(item)) return item;
  const o = item as Record<string, unknown>;
  if (o.kind === undefined) o.kind = form.itemKind;
  if (o.apiVersion === undefined && form.itemApiVersion !== undefined) o.apiVersion = form.itemApiVersion;
  return o;
}
