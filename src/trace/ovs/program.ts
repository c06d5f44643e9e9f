// The compiled bundle made walkable: flows by table in priority order with their matches
// compiled, groups by ID, and every action checked up front, so a flow form the tracer
// cannot evaluate stops the trace before it starts, whether or not a packet reaches it.
import { InternalError } from '../../diag/diagnostic.js';
import type { OvsProgram } from '../../backends/ovs/index.js';
import type { Action, Flow, Group } from '../../ovs/openflow.js';
import type { ServicePort } from '../../model/types.js';
import { checkAction } from './exec.js';
import { compileMatch, type MatchFn } from './match.js';
import { ruleText } from './describe.js';

export interface IndexedFlow {
  flow: Flow;
  owner?: ServicePort;
  matches: MatchFn[];
  /** The flow as dump-flows shows it (priority, match, actions). */
  rule: string;
}

export interface Program {
  /** A table's flows, highest priority first. */
  table(n: number): IndexedFlow[];
  groups: Map<number, Group>;
}

function checkActions(actions: Action[], where: string, table: number | undefined, groups: Map<number, Group>): void {
  for (const a of actions) {
    try {
      checkAction(a, table, groups);
    } catch (e) {
      if (e instanceof InternalError) throw new InternalError(`${where}: ${e.message}`);
      throw e;
    }
  }
}

export function indexProgram(p: OvsProgram): Program {
  const groups = new Map(p.groups.map((g) => [g.id, g]));
  for (const g of p.groups) g.buckets.forEach((b, i) => checkActions(b.actions, `group ${g.id} bucket ${i}`, undefined, groups));
  const tables = new Map<number, IndexedFlow[]>();
  for (const { flow, owner } of p.flows) {
    checkActions(flow.actions, `table ${flow.table} priority ${flow.priority}`, flow.table, groups);
    const rule = ruleText(flow);
    const list = tables.get(flow.table) ?? [];
    list.push({ flow, ...(owner ? { owner } : {}), matches: flow.match.map(compileMatch), rule });
    tables.set(flow.table, list);
  }
  for (const list of tables.values()) list.sort((a, b) => b.flow.priority - a.flow.priority);
  return { table: (n) => tables.get(n) ?? [], groups };
}
