// metadata as the API server validates it: the name by the kind's rule, the namespace as
// a DNS-1123 label (absent means "default", as kubectl applies it), label keys and
// annotation keys as qualified names, label values as label values.
import type { Reporter } from './collector.js';
import { fields, stringMap } from './fields.js';
import { dnsLabelProblem, labelValueProblem, qualifiedNameProblem } from './names.js';

export interface Metadata {
  namespace: string; // "" for kinds without one
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export type NameRule = (s: string) => string | null;

/**
 * Labels and annotations never reach a rule: kube-proxy compares a few of them with fixed
 * values and checks none, so a malformed one (which the API server refuses) is a warning.
 */
const UNCHECKED = ' (the API server refuses it; kube-proxy does not check it)';

/** The object's metadata, or null when its name or namespace is unusable (reported). */
export function checkMetadata(r: Reporter, obj: unknown, nameRule: NameRule, namespaced: boolean): Metadata | null {
  const md = fields(fields(obj).metadata);
  const name = usableName(r, 'name', md.name, nameRule);
  const namespace = namespaced ? (md.namespace === undefined ? 'default' : usableName(r, 'namespace', md.namespace, dnsLabelProblem)) : '';
  const labels = fields(md.labels);
  for (const k of Object.keys(labels)) {
    const v = labels[k];
    if (isKnownLabelKey(k) && typeof v === 'string' && labelValueProblem(v) === null) continue;
    const kp = qualifiedNameProblem(k);
    if (kp) r.report(['metadata', 'labels', k], `label key ${kp}${UNCHECKED}`, 'warning', true);
    const s = r.text(['metadata', 'labels', k], v);
    const vp = s === null ? null : labelValueProblem(s);
    if (vp) r.warn(['metadata', 'labels', k], `${vp}${UNCHECKED}`);
  }
  const annotations = fields(md.annotations);
  for (const k of Object.keys(annotations)) {
    const v = annotations[k];
    if (isKnownLabelKey(k) && typeof v === 'string') continue;
    const kp = qualifiedNameProblem(k);
    if (kp) r.report(['metadata', 'annotations', k], `annotation key ${kp}${UNCHECKED}`, 'warning', true);
    r.text(['metadata', 'annotations', k], v);
  }
  if (name === null || namespace === null) return null;
  return { namespace, name, labels: stringMap(md.labels), annotations: stringMap(md.annotations) };
}

/** metadata.name or .namespace when it is text that passes its rule; else null, and the problem is reported. */
function usableName(r: Reporter, field: 'name' | 'namespace', value: unknown, check: NameRule): string | null {
  if (typeof value === 'string' && check(value) === null) return value;
  const path = ['metadata', field];
  const s = r.text(path, value);
  const problem = s === null ? null : check(s);
  if (problem) r.report(path, problem);
  return s === null || problem ? null : s;
}

// Label and annotation keys recur on many objects: each is checked once.
const knownLabelKeys = new Set<string>();
const MAX_KNOWN_LABEL_KEYS = 10000;

/** True when k is a valid qualified name (nothing to report about the key). */
function isKnownLabelKey(k: string): boolean {
  if (knownLabelKeys.has(k)) return true;
  if (qualifiedNameProblem(k) !== null) return false;
  if (knownLabelKeys.size >= MAX_KNOWN_LABEL_KEYS) knownLabelKeys.clear();
  knownLabelKeys.add(k);
  return true;
}
