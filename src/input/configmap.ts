// kube-proxy's configuration as kubeadm clusters keep it: the v1 ConfigMap
// kube-system/kube-proxy, whose data["config.conf"] holds a KubeProxyConfiguration as YAML
// text (its data["kubeconfig.conf"] beside it is not ours). A dump of the cluster holds
// that ConfigMap, not the configuration itself, so the ConfigMap stands for the object in
// its text, and every position inside that text is told in the file (embedded-text.ts).
import type { Diagnostic } from '../diag/diagnostic.js';
import { embeddedPlace, type EmbeddedPlace } from './embedded-text.js';
import type { LineIndex } from './positions.js';
import type { FieldPath, InputFile, SourceObject } from './source.js';

export const CONFIG_KEY = 'config.conf';
const DATA_PATH: FieldPath = ['data', CONFIG_KEY];

/** What source.ts lends: the documents of a text, problems told at offsets of that text. */
export interface EmbeddedReader {
  /** Null when some problem was told; an empty document's value is null. */
  documents(text: string, file: string, at: (offset: number, message: string) => void): { value: unknown; locate: (place: EmbeddedPlace) => SourceObject['locate'] }[] | null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Whether an object is the ConfigMap kube-system/kube-proxy. */
export function isKubeProxyConfigMap(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || value.kind !== 'ConfigMap' || value.apiVersion !== 'v1' || !isRecord(value.metadata)) return false;
  return value.metadata.namespace === 'kube-system' && value.metadata.name === 'kube-proxy';
}

/**
 * The KubeProxyConfiguration that the ConfigMap `o` holds, as an object of its own standing
 * where the ConfigMap stands; null when there is none, with the reason in `diagnostics`.
 */
export function embeddedConfig(o: SourceObject, f: InputFile, lines: LineIndex, reader: EmbeddedReader, diagnostics: Diagnostic[]): SourceObject | null {
  const cm = o.value as Record<string, unknown>;
  const text = isRecord(cm.data) ? cm.data[CONFIG_KEY] : undefined;
  const report = (path: FieldPath, message: string, severity: Diagnostic['severity'] = 'error') =>
    diagnostics.push({ severity, pos: o.locate(path), kind: 'ConfigMap', object: 'kube-system/kube-proxy', field: fieldText(path), message });
  if (typeof text !== 'string') {
    if (text === undefined) report(isRecord(cm.data) ? ['data'] : [], `holds no data["${CONFIG_KEY}"], where kubeadm keeps kube-proxy's configuration; not read`, 'warning');
    else report(DATA_PATH, 'must be a string: a KubeProxyConfiguration as YAML text');
    return null;
  }
  const start = o.locate(DATA_PATH);
  const place = embeddedPlace(f.text, lines.offsetOf(start.line, start.col), text);
  const at = (offset: number, message: string) => {
    const p = place(offset);
    diagnostics.push({ severity: 'error', pos: { file: f.name, line: p.line, col: p.col }, kind: 'ConfigMap', object: 'kube-system/kube-proxy', field: fieldText(DATA_PATH), message });
  };
  const docs = reader.documents(text, f.name, at);
  if (docs === null) return null; // told
  const objects = docs.filter((d) => d.value !== null);
  if (objects.length !== 1) {
    report(DATA_PATH, objects.length === 0 ? 'holds no KubeProxyConfiguration' : 'holds more than one document; a KubeProxyConfiguration is one');
    return null;
  }
  return { file: f.name, value: objects[0].value, locate: objects[0].locate(place), order: o.order };
}

function fieldText(path: FieldPath): string | undefined {
  return path.length === 0 ? undefined : path.map((k, i) => (k === CONFIG_KEY ? `["${k}"]` : i === 0 ? k : `.${k}`)).join('');
}
