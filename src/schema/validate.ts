// ajv (allErrors) over each object by kind; every schema error becomes a diagnostic that
// points at the offending field in its file.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { quoteText, type Diagnostic } from '../diag/diagnostic.js';
import type { FieldPath, SourceObject } from '../input/source.js';
import * as generated from './validators.generated.js';
import { isNftListing, nftListingWarning, UnreadObjects } from './unread.js';

export type KnownKind = 'Service' | 'EndpointSlice' | 'Endpoints' | 'Node' | 'ServiceCIDR' | 'KubeProxyConfiguration';

/** apiVersion/kind pairs we read; anything else is skipped with a warning. */
const KINDS: Record<string, { kind: KnownKind; versions: string[] }> = {
  Service: { kind: 'Service', versions: ['v1'] },
  EndpointSlice: { kind: 'EndpointSlice', versions: ['discovery.k8s.io/v1'] },
  Endpoints: { kind: 'Endpoints', versions: ['v1'] },
  Node: { kind: 'Node', versions: ['v1'] },
  ServiceCIDR: { kind: 'ServiceCIDR', versions: ['networking.k8s.io/v1', 'networking.k8s.io/v1beta1', 'networking.k8s.io/v1alpha1'] },
  KubeProxyConfiguration: { kind: 'KubeProxyConfiguration', versions: ['kubeproxy.config.k8s.io/v1alpha1'] },
};

// The schemas of kinds.ts as ajv (allErrors) compiles them, generated at build time by
// scripts/gen-validators.mjs: compiling them at every start cost 130-300 ms of each run.
const validators = generated as unknown as Record<KnownKind, ValidateFunction>;

export function fieldPathText(p: FieldPath): string {
  let out = '';
  for (const k of p) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (!/^[A-Za-z0-9_-]+$/.test(k)) out += `[${quoteText(k)}]`;
    else out += out ? `.${k}` : k;
  }
  return out;
}

/** The cluster-scoped kinds kproxc reads. */
const CLUSTER_SCOPED = new Set(['Node', 'ServiceCIDR', 'KubeProxyConfiguration']);

/** The namespaced kinds kproxc reads: without metadata.namespace they are in "default". */
const NAMESPACED = new Set(['Service', 'EndpointSlice', 'Endpoints', 'ConfigMap']);

/**
 * Cluster-scoped kinds of the built-in API groups that a `kubectl get all,...` dump holds.
 * The API server ignores a namespace on them, so none is shown even if one was written.
 */
const BUILTIN_CLUSTER_SCOPED = new Set([
  'Namespace', 'PersistentVolume', 'StorageClass', 'CSIDriver', 'CSINode', 'VolumeAttachment', 'ClusterRole',
  'ClusterRoleBinding', 'CustomResourceDefinition', 'APIService', 'PriorityClass', 'RuntimeClass', 'IngressClass',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding', 'CertificateSigningRequest', 'FlowSchema', 'PriorityLevelConfiguration',
  'ComponentStatus', 'IPAddress', 'GatewayClass',
]);

/**
 * How diagnostics name an object: "namespace/name" for a namespaced kind ("default" when
 * the namespace is absent), "name" for a cluster-scoped one. Of a kind kproxc does not read
 * it cannot know the scope: a namespace is shown only where the object carries one, as
 * kubectl prints namespaced objects with theirs and cluster-scoped ones without.
 */
export function objectName(value: unknown, kind?: string): string | undefined {
  const md = (value as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  if (!md || typeof md !== 'object' || typeof md.name !== 'string') return undefined;
  if (kind !== undefined && (CLUSTER_SCOPED.has(kind) || BUILTIN_CLUSTER_SCOPED.has(kind))) return md.name;
  if (typeof md.namespace === 'string') return `${md.namespace}/${md.name}`;
  return kind === undefined || NAMESPACED.has(kind) ? `default/${md.name}` : md.name;
}

function schemaMessage(e: ErrorObject): { path: FieldPath; message: string } {
  const path: FieldPath = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  switch (e.keyword) {
    case 'required':
      return { path: [...path, (e.params as { missingProperty: string }).missingProperty], message: 'required field is missing' };
    case 'enum':
      return { path, message: `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}` };
    case 'type': {
      const t = (e.params as { type: string | string[] }).type;
      return { path, message: `must be of type ${(Array.isArray(t) ? t : String(t).split(',')).join(' or ')}` };
    }
    case 'minItems':
    case 'maxItems': {
      const n = (e.params as { limit: number }).limit;
      return { path, message: `must have ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${n} item${n === 1 ? '' : 's'}` };
    }
    case 'minimum':
    case 'maximum':
      return { path, message: `${e.message} (value out of range)` };
    default:
      return { path, message: e.message ?? 'invalid' };
  }
}

export interface TypedObject {
  kind: KnownKind;
  source: SourceObject;
  /** Fields the schema refused (reported): the object is invalid, but its other fields are still checked. */
  refused: FieldPath[];
  /** The object as diagnostics name it (objectName), if it has a name. */
  name: string | undefined;
}

/** Sorts objects into known kinds (schema-checked) and warnings for the rest, the unread ones last. */
export function validateObjects(objects: SourceObject[]): { typed: TypedObject[]; diagnostics: Diagnostic[] } {
  const typed: TypedObject[] = [];
  const diagnostics: Diagnostic[] = [];
  const unread = new UnreadObjects();
  for (const o of objects) {
    const t = validateObject(o, diagnostics, unread);
    if (t) typed.push(t);
  }
  diagnostics.push(...unread.warnings());
  return { typed, diagnostics };
}

/**
 * One object of a known kind, schema-checked; null for anything else, with a diagnostic,
 * or counted in `unread` for a kind kproxc does not read (its warnings are the caller's to
 * add once every object is seen).
 */
export function validateObject(o: SourceObject, diagnostics: Diagnostic[], unread: UnreadObjects): TypedObject | null {
  if (typeof o.value !== 'object' || o.value === null || Array.isArray(o.value)) {
    diagnostics.push({ severity: 'error', pos: o.locate([]), message: 'not a Kubernetes object (expected a mapping with apiVersion and kind)' });
    return null;
  }
  if (isNftListing(o.value)) {
    diagnostics.push(nftListingWarning(o));
    return null;
  }
  const v = o.value as { apiVersion?: unknown; kind?: unknown };
  const name = objectName(o.value, typeof v.kind === 'string' ? v.kind : undefined);
  if (typeof v.kind !== 'string' || typeof v.apiVersion !== 'string') {
    diagnostics.push({
      severity: 'error',
      pos: o.locate([typeof v.kind !== 'string' ? 'kind' : 'apiVersion']),
      object: name,
      field: typeof v.kind !== 'string' ? 'kind' : 'apiVersion',
      message: 'required field is missing or not a string',
    });
    return null;
  }
  // An own property only: a kind named like a property of every object (toString) is unknown.
  const known = Object.hasOwn(KINDS, v.kind) ? KINDS[v.kind] : undefined;
  if (!known || !known.versions.includes(v.apiVersion)) {
    unread.add(o, v.apiVersion, v.kind, name, known?.versions);
    return null;
  }
  const validate = validators[known.kind];
  const refused: FieldPath[] = [];
  if (!validate(o.value)) {
    for (const e of validate.errors ?? []) {
      const { path, message } = schemaMessage(e);
      refused.push(path);
      diagnostics.push({ severity: 'error', pos: o.locate(path), kind: known.kind, object: name, field: fieldPathText(path), message });
    }
  }
  return { kind: known.kind, source: o, refused, name };
}
