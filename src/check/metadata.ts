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

/** The object's metadata, or null when its name or namespace is unusable (reported). */
export function checkMetadata(r: Reporter, obj: unknown, nameRule: NameRule, namespaced: boolean): Metadata | null {
  const md = fields(fields(obj).metadata);
  let usable = true;
  const rule = (path: string[], value: unknown, check: NameRule): string | null => {
    const s = r.text(path, value);
    const problem = s === null ? null : check(s);
    if (problem) r.report(path, problem);
    if (s === null || problem) usable = false;
    return s;
  };
  const name = rule(['metadata', 'name'], md.name, nameRule);
  const namespace = namespaced ? (md.namespace === undefined ? 'default' : rule(['metadata', 'namespace'], md.namespace, dnsLabelProblem)) : '';
  for (const [k, v] of Object.entries(fields(md.labels))) {
    const kp = qualifiedNameProblem(k);
    if (kp) r.report(['metadata', 'labels', k], `label key ${kp}`, 'error', true);
    const s = r.text(['metadata', 'labels', k], v);
    const vp = s === null ? null : labelValueProblem(s);
    if (vp) r.report(['metadata', 'labels', k], vp);
  }
  for (const [k, v] of Object.entries(fields(md.annotations))) {
    const kp = qualifiedNameProblem(k);
    if (kp) r.report(['metadata', 'annotations', k], `annotation key ${kp}`, 'error', true);
    r.text(['metadata', 'annotations', k], v);
  }
  if (!usable || name === null || namespace === null) return null;
  return { namespace, name, labels: stringMap(md.labels), annotations: stringMap(md.annotations) };
}
