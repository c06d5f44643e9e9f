// The bridge as the ovs diff sees it, from what dump-flows and dump-groups printed: our
// flows by place and match (also what the compile is given, to keep no value of a flow
// the bridge holds as compiled), the flows OVS learned from our learn actions, the groups,
// and a note for every flow that is not ours, which the diff leaves alone.
import type { Diagnostic } from '../../diag/diagnostic.js';
import type { LiveFlow, LiveGroup } from '../../live/ovs/dump-read.js';
import { cookieHex } from '../../ovs/dump-form.js';
import { SERVICE_COOKIE, TABLE } from '../../ovs/pipeline.js';
import { flowPlace } from '../../ovs/placed.js';
import { isLearned } from './learned.js';

const OUR_TABLES = new Set<number>(Object.values(TABLE));
const SERVICE_COOKIE_TEXT = cookieHex(SERVICE_COOKIE);
/** Our cookie and the learn cookies (our cookie | group ID) print as 0x10300 and 8 hex digits. */
const isOurCookie = (c: string) => c.length === 15 && c.startsWith('0x10300');

/** The dump files, to name in notes. */
export interface LiveFiles {
  flows: string;
  groups: string;
}

export interface LiveBridge {
  /** Our flows but the learned ones, by place (flowPlace) and match. */
  ours: Map<number, Map<string, LiveFlow>>;
  learned: LiveFlow[];
  groups: LiveGroup[];
  files: LiveFiles;
  /** The flows left alone because they are not ours, one note each, in the dump's order. */
  notes: Diagnostic[];
}

export function note(file: string, line: number, message: string): Diagnostic {
  return { severity: 'warning', pos: { file, line, col: 1 }, message };
}

export function liveBridge(flows: LiveFlow[], groups: LiveGroup[], files: LiveFiles): LiveBridge {
  const bridge: LiveBridge = { ours: new Map(), learned: [], groups, files, notes: [] };
  for (const f of flows) {
    if (!OUR_TABLES.has(f.table) || !isOurCookie(f.cookie)) {
      bridge.notes.push(note(files.flows, f.line, `table ${f.table} flow ${f.key} (cookie ${f.cookie}) is not kproxc's; left alone`));
    } else if (isLearned(f, SERVICE_COOKIE_TEXT)) {
      bridge.learned.push(f);
    } else {
      const p = flowPlace(f.table, f.priority);
      let same = bridge.ours.get(p);
      if (!same) bridge.ours.set(p, (same = new Map()));
      same.set(f.match, f);
    }
  }
  return bridge;
}
