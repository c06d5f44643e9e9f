// JSON Schemas for the fields kproxc reads, per kind. Fields we do not read are allowed
// and ignored, as `kubectl get -o yaml` prints many. Semantic rules (IP syntax, ranges
// that depend on other fields, duplicates) live in check/.

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const int32: Schema = { type: 'integer', minimum: -2147483648, maximum: 2147483647 };
const port: Schema = { type: 'integer', minimum: 1, maximum: 65535 };
const strList: Schema = { type: 'array', items: str };
const strMap: Schema = { type: 'object', additionalProperties: str };
const protocol: Schema = { enum: ['TCP', 'UDP', 'SCTP'] };

const metadata = (namespaced: boolean): Schema => ({
  type: 'object',
  required: ['name'],
  properties: {
    name: str,
    ...(namespaced ? { namespace: str } : {}),
    labels: strMap,
    annotations: strMap,
  },
});

const objectSchema = (namespaced: boolean, props: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  required: ['metadata', ...required],
  properties: { apiVersion: str, kind: str, metadata: metadata(namespaced), ...props },
});

export const serviceSchema = objectSchema(true, {
  spec: {
    type: 'object',
    properties: {
      type: { enum: ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] },
      clusterIP: str,
      clusterIPs: strList,
      ipFamilies: { type: 'array', items: { enum: ['IPv4', 'IPv6'] }, maxItems: 2 },
      ports: {
        type: 'array',
        items: {
          type: 'object',
          required: ['port'],
          properties: {
            name: str,
            protocol,
            port,
            nodePort: { type: 'integer', minimum: 0, maximum: 65535 },
            targetPort: { type: ['integer', 'string'] },
          },
        },
      },
      externalIPs: strList,
      loadBalancerSourceRanges: strList,
      externalTrafficPolicy: { enum: ['Cluster', 'Local'] },
      internalTrafficPolicy: { enum: ['Cluster', 'Local'] },
      sessionAffinity: { enum: ['None', 'ClientIP'] },
      sessionAffinityConfig: {
        type: 'object',
        properties: {
          clientIP: { type: 'object', properties: { timeoutSeconds: { type: 'integer', minimum: 1, maximum: 86400 } } },
        },
      },
      healthCheckNodePort: { type: 'integer', minimum: 0, maximum: 65535 },
      // PreferSameZone and PreferSameNode came with Kubernetes 1.33 (feature-gated before).
      trafficDistribution: { enum: ['PreferClose', 'PreferSameZone', 'PreferSameNode'] },
    },
  },
  status: {
    type: 'object',
    properties: {
      loadBalancer: {
        type: 'object',
        properties: {
          ingress: {
            type: 'array',
            items: { type: 'object', properties: { ip: str, hostname: str, ipMode: { enum: ['VIP', 'Proxy'] } } },
          },
        },
      },
    },
  },
});

const boolOrNull: Schema = { type: ['boolean', 'null'] };

export const endpointSliceSchema = objectSchema(
  true,
  {
    addressType: { enum: ['IPv4', 'IPv6', 'FQDN'] },
    endpoints: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        required: ['addresses'],
        properties: {
          addresses: { type: 'array', items: str, minItems: 1 },
          conditions: { type: 'object', properties: { ready: boolOrNull, serving: boolOrNull, terminating: boolOrNull } },
          nodeName: str,
          zone: str,
          hints: {
            type: 'object',
            properties: {
              forZones: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: str } } },
              forNodes: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: str } } },
            },
          },
        },
      },
    },
    ports: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        properties: { name: { type: ['string', 'null'] }, port: { type: ['integer', 'null'], minimum: 1, maximum: 65535 }, protocol },
      },
    },
  },
  ['addressType'],
);

const endpointAddress: Schema = { type: 'object', required: ['ip'], properties: { ip: str, nodeName: str } };

export const endpointsSchema = objectSchema(true, {
  subsets: {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        addresses: { type: 'array', items: endpointAddress },
        notReadyAddresses: { type: 'array', items: endpointAddress },
        ports: { type: 'array', items: { type: 'object', required: ['port'], properties: { name: str, port, protocol } } },
      },
    },
  },
});

export const nodeSchema = objectSchema(false, {
  spec: { type: 'object', properties: { podCIDR: str, podCIDRs: strList } },
  status: {
    type: 'object',
    properties: {
      addresses: { type: 'array', items: { type: 'object', required: ['type', 'address'], properties: { type: str, address: str } } },
      nodeInfo: { type: 'object', properties: { kubeProxyVersion: str, kubeletVersion: str } },
    },
  },
});

export const serviceCIDRSchema = objectSchema(false, {
  spec: { type: 'object', properties: { cidrs: { type: 'array', items: str, maxItems: 2 } } },
});

const masqueradeBit: Schema = { type: 'integer', minimum: 0, maximum: 31 };

export const kubeProxyConfigurationSchema: Schema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    hostnameOverride: str,
    clusterCIDR: str,
    detectLocalMode: { enum: ['', 'ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'] },
    detectLocal: { type: 'object', properties: { bridgeInterface: str, interfaceNamePrefix: str } },
    nodePortAddresses: { type: ['array', 'null'], items: str },
    nftables: { type: 'object', properties: { masqueradeAll: { type: 'boolean' }, masqueradeBit: { type: ['integer', 'null'], minimum: 0, maximum: 31 } } },
    iptables: { type: 'object', properties: { masqueradeAll: { type: 'boolean' }, masqueradeBit: { ...masqueradeBit, type: ['integer', 'null'] } } },
  },
};

export const int32Schema = int32;
