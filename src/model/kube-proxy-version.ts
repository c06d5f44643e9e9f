// Which kube-proxy the node runs decides which table its nftables mode programs: 1.36
// reworked masquerading (no mark-for-masquerade chain, a hairpin set, endpoint chains only
// for session affinity) and 1.37 DNATs a one-endpoint Service directly
// (docs/kube-proxy-versions.md). Every release up to 1.35 programs 1.35's table.

/** The tables kproxc programs, each named by the first kube-proxy release that programs it. */
export const KUBE_PROXY_VERSIONS = ['1.35', '1.36', '1.37'] as const;
export type KubeProxyVersion = (typeof KUBE_PROXY_VERSIONS)[number];

/** Without a version from the command line or the snapshot: the current release. */
export const NEWEST_KUBE_PROXY: KubeProxyVersion = '1.37';

/** kube-proxy's nftables mode came in 1.29. */
const FIRST_NFTABLES_MINOR = 29;

/** The versions kproxc knows, as an error names them. */
export const KNOWN_VERSIONS_TEXT = `kube-proxy 1.${FIRST_NFTABLES_MINOR} to ${NEWEST_KUBE_PROXY} (1.${FIRST_NFTABLES_MINOR}-1.35 program 1.35's table; 1.36 and 1.37 their own)`;

/**
 * The table a kube-proxy version programs, from a version as Kubernetes prints it: `1.37`,
 * `v1.37.1`, `v1.36.2-gke.100`, `v1.30.0+k3s1`. A problem, in words, for anything else
 * or a release kproxc does not know.
 */
export function parseKubeProxyVersion(text: string): { version: KubeProxyVersion } | { problem: string } {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(text);
  if (!m) return { problem: `${JSON.stringify(text)} is not a Kubernetes version (1.37, v1.37.1)` };
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major !== 1 || minor < FIRST_NFTABLES_MINOR) {
    return { problem: `kube-proxy ${text} has no nftables mode; kproxc knows ${KNOWN_VERSIONS_TEXT}` };
  }
  if (minor <= 35) return { version: '1.35' };
  const version = `1.${minor}`;
  if ((KUBE_PROXY_VERSIONS as readonly string[]).includes(version)) return { version: version as KubeProxyVersion };
  return { problem: `kube-proxy ${text} is newer than kproxc knows: it knows ${KNOWN_VERSIONS_TEXT}` };
}

/** Where the version a table is compiled for came from, as `diff` and `--help` tell it. */
export type VersionSource = 'flag' | 'node' | 'newest' | 'live table';

export interface ResolvedVersion {
  version: KubeProxyVersion;
  source: VersionSource;
}
