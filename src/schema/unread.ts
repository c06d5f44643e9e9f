// Objects kproxc does not read, told once per apiVersion and kind (at the first one, with
// the count), so that a dump of everything in a namespace is a few lines and not one per
// object. They cannot change the output, so they are minor: printed after the warnings
// that can. A known kind in a version kproxc does not read is the exception: its objects
// were probably meant to be read, so it is told with the version that is.
import { displayText, type Diagnostic, type Position } from '../diag/diagnostic.js';
import type { SourceObject } from '../input/source.js';

interface Group {
  apiVersion: string;
  kind: string;
  pos: Position;
  name: string | undefined;
  count: number;
  /** For a kind kproxc reads in other versions: those versions. */
  readVersions?: string[];
}

export class UnreadObjects {
  private readonly groups = new Map<string, Group>();

  add(o: SourceObject, apiVersion: string, kind: string, name: string | undefined, readVersions?: string[]): void {
    // JSON of the pair: apiVersion and kind may hold any character.
    const key = JSON.stringify([apiVersion, kind]);
    const g = this.groups.get(key);
    if (g) g.count++;
    else this.groups.set(key, { apiVersion, kind, pos: o.locate([]), name, count: 1, readVersions });
  }

  /** One warning per apiVersion and kind, in the order their first objects came. */
  warnings(): Diagnostic[] {
    return [...this.groups.values()].map((g) => {
      const reads = g.readVersions ? ` (it reads ${g.readVersions.map(displayText).join(', ')})` : '';
      const count = g.count > 1 ? ` (${g.count} objects, the first here)` : '';
      return {
        severity: 'warning',
        pos: g.pos,
        kind: g.kind,
        object: g.name,
        message: `${displayText(g.apiVersion)} ${displayText(g.kind)} is not read by kproxc${reads}; skipped${count}`,
        ...(g.readVersions ? {} : { minor: true }),
      };
    });
  }
}

/** Whether a document is what `nft -j list ruleset` prints: {"nftables": [...]}. */
export function isNftListing(value: object): boolean {
  const v = value as { nftables?: unknown; kind?: unknown };
  return v.kind === undefined && Array.isArray(v.nftables);
}

/** The warning for an nft listing among the snapshot's files (next to it in a directory, most likely). */
export function nftListingWarning(o: SourceObject): Diagnostic {
  return {
    severity: 'warning',
    pos: o.locate([]),
    message: 'an nft JSON listing (nft -j list ruleset), not a Kubernetes object: skipped; pass it to kproxc diff --live',
    minor: true,
  };
}
