import type { EntityManager } from 'typeorm';
import { connectorsOfRuns } from '../../db/stores/agentRuns.js';
import { connectorNameRows } from '../../db/stores/connectors.js';

/** The name of each connector given by id (unknown ids are left out). */
export async function connectorNames(m: EntityManager, connectorIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(connectorIds)];
  if (!ids.length) return new Map();
  const rows = await connectorNameRows(m, ids);
  return new Map(rows.map((c) => [c.id, c.name]));
}

/** The name of the connector each agent run went through, by run id (what the activity shows for a run's token). */
export async function connectorNamesOfRuns(m: EntityManager, runIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(runIds)];
  if (!ids.length) return new Map();
  const runs = await connectorsOfRuns(m, ids);
  const names = await connectorNames(
    m,
    runs.map((r) => r.connectorId),
  );
  const out = new Map<string, string>();
  for (const r of runs) {
    const name = names.get(r.connectorId);
    if (name) out.set(r.id, name);
  }
  return out;
}
