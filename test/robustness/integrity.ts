import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from '../../db/sql.js';
import type { Runtime } from '../../src/runtime.js';
import { DELIVERED_EVENT_TYPES } from '../../src/webhooks/outbox.js';

type Row = Record<string, any>;

const rows = async (rt: Runtime, text: string, params: unknown[] = []): Promise<Row[]> =>
  (await sql<Row>(rt.ds, text, params)).rows;

/** Tables no /v1 operation or MCP tool writes to: their row counts must never move under fuzzing. */
export const UNTOUCHABLE_TABLES = [
  'users',
  'organizations',
  'memberships',
  'api_keys',
  'oauth_clients',
  'oauth_grants',
  'oauth_tokens',
  'oauth_codes',
  'webhooks',
  'settings',
  'agent_connectors',
];

export async function rowCounts(rt: Runtime, tables = UNTOUCHABLE_TABLES): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = Number((await rows(rt, `SELECT COUNT(*) AS "n" FROM "${t}"`))[0].n);
  return out;
}

const ROOM_TABLES = [
  'messages',
  'tasks',
  'records',
  'approvals',
  'files',
  'events',
  'webhooks',
  'webhook_deliveries',
  'agent_runs',
];

/**
 * Every row that belongs to an organization's rooms, table by table, in a stable order: compared before
 * and after a run to prove that nothing outside the caller's reach changed.
 */
export async function organizationSnapshot(rt: Runtime, organizationId: string): Promise<Record<string, Row[]>> {
  const rooms = await rows(rt, 'SELECT * FROM "rooms" WHERE "organizationId" = ? ORDER BY "id"', [organizationId]);
  const ids = rooms.map((r) => r.id as string);
  const marks = ids.map(() => '?').join(', ');
  const snap: Record<string, Row[]> = { rooms };
  snap.room_members = await rows(
    rt,
    `SELECT * FROM "room_members" WHERE "roomId" IN (${marks}) ORDER BY "roomId", "userId"`,
    ids,
  );
  for (const t of ROOM_TABLES)
    snap[t] = await rows(rt, `SELECT * FROM "${t}" WHERE "roomId" IN (${marks}) ORDER BY "id"`, ids);
  return snap;
}

/**
 * The invariants of "nothing half-done", checked on the whole database:
 * - every message, task and record has its `*.created` event, every attached file its `file.uploaded`;
 * - every delivered event type in a room has one delivery row per webhook that was active when it happened;
 * - every file row has its bytes on disk (same size and SHA-256), and the files directory holds nothing else
 *   (no temporary or orphaned bytes);
 * - no idempotency key is left claimed (`in_flight`) once no request runs;
 * - no unit balance is negative.
 * Returns the problems found (empty when sound).
 */
export async function integrityProblems(rt: Runtime): Promise<string[]> {
  const problems: string[] = [];
  const events = await rows(rt, 'SELECT "id", "type", "roomId", "objectId", "createdAt" FROM "events"');
  const has = new Set(events.map((e) => `${e.type}:${e.objectId}`));
  for (const [table, type] of [
    ['messages', 'message.created'],
    ['tasks', 'task.created'],
    ['records', 'record.created'],
  ]) {
    for (const r of await rows(rt, `SELECT "id" FROM "${table}"`))
      if (!has.has(`${type}:${r.id}`)) problems.push(`${table} ${r.id} has no ${type} event`);
  }
  const files = await rows(rt, 'SELECT "id", "messageId", "taskId", "size", "sha256", "storageKey" FROM "files"');
  for (const f of files) {
    if ((f.messageId || f.taskId) && !has.has(`file.uploaded:${f.id}`))
      problems.push(`file ${f.id} is attached but has no file.uploaded event`);
  }
  const hooks = await rows(rt, 'SELECT "id", "roomId", "createdAt" FROM "webhooks" WHERE "active" = ?', [true]);
  const deliveries = await rows(
    rt,
    'SELECT "webhookId", "eventId" FROM "webhook_deliveries" WHERE "redeliveryOf" IS NULL',
  );
  const delivered = new Set(deliveries.map((d) => `${d.webhookId}:${d.eventId}`));
  for (const e of events) {
    if (!DELIVERED_EVENT_TYPES.has(e.type)) continue;
    for (const h of hooks) {
      if (h.roomId === e.roomId && h.createdAt <= e.createdAt && !delivered.has(`${h.id}:${e.id}`)) {
        problems.push(`event ${e.id} (${e.type}) has no delivery row for webhook ${h.id}`);
      }
    }
  }
  problems.push(...fileProblems(path.join(rt.services.config.dataDir, 'files'), files));
  for (const k of await rows(rt, 'SELECT "id" FROM "idempotency_keys" WHERE "state" = ?', ['in_flight'])) {
    problems.push(`idempotency key ${String(k.id).slice(0, 12)}… is still claimed`);
  }
  for (const u of await rows(rt, 'SELECT "billingEntity", "used" FROM "unit_usage"')) {
    if (Number(u.used) < 0) problems.push(`units of ${u.billingEntity} are negative (${u.used})`);
  }
  return problems;
}

function fileProblems(dir: string, files: Row[]): string[] {
  const problems: string[] = [];
  const onDisk = new Set(fs.existsSync(dir) ? fs.readdirSync(dir) : []);
  for (const f of files) {
    const p = path.join(dir, f.storageKey);
    if (!onDisk.has(f.storageKey)) {
      problems.push(`file ${f.id} has no bytes on disk`);
      continue;
    }
    const bytes = fs.readFileSync(p);
    if (bytes.length !== Number(f.size) || createHash('sha256').update(bytes).digest('hex') !== f.sha256) {
      problems.push(`file ${f.id}: bytes on disk differ from its metadata`);
    }
    onDisk.delete(f.storageKey);
  }
  for (const stray of onDisk) problems.push(`files directory holds ${stray}, which no file row names`);
  return problems;
}
