import { LessThan, MoreThanOrEqual, type EntityManager, type DataSource } from 'typeorm';
import { WebhookAttempt, WebhookDelivery } from '../entities/index.js';
import { isPostgres, LIMIT_PARAM, sql } from '../sql.js';

// The webhook outbox's tables: `webhook_deliveries` (one row per delivery, its lease and its last result) and
// `webhook_attempts` (every attempt made). Raw statements (`sql()`, prepared once) on the worker's path: the claim,
// the settlement and the multi-row INSERTs; TypeORM for the reads of the pages and the CLI.

/** The columns of `webhook_deliveries`, in the order every INSERT writes them. */
export const DELIVERY_COLUMNS = [
  'id',
  'webhookId',
  'roomId',
  'eventId',
  'eventType',
  'deliveryId',
  'payload',
  'state',
  'attempts',
  'maxAttempts',
  'nextAttemptAt',
  'leaseOwner',
  'leaseUntil',
  'statusCode',
  'durationMs',
  'responseBody',
  'lastError',
  'finalizedAt',
  'redeliveryOf',
  'createdAt',
] as const satisfies readonly (keyof WebhookDelivery)[];

/** The columns of `webhook_attempts`, in the order every INSERT writes them. */
export const ATTEMPT_COLUMNS = [
  'id',
  'deliveryRowId',
  'webhookId',
  'deliveryId',
  'attemptNumber',
  'kind',
  'startedAt',
  'durationMs',
  'statusCode',
  'errorClass',
  'requestUrl',
  'requestHeaders',
  'requestBody',
  'responseHeaders',
  'responseBody',
  'createdAt',
] as const satisfies readonly (keyof WebhookAttempt)[];

/** Rows per INSERT statement (SQLite allows 32,766 parameters per statement). */
const INSERT_CHUNK = 500;

/** Multi-row INSERTs of `rows` into `table`, `columns` in that order, INSERT_CHUNK rows per statement. */
async function insertRows<R, C extends keyof R & string>(
  m: EntityManager,
  table: string,
  columns: readonly C[],
  rows: R[],
): Promise<void> {
  const head = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    await sql(
      m,
      head + chunk.map(() => tuple).join(', '),
      chunk.flatMap((r) => columns.map((c) => r[c])),
    );
  }
}

/** Inserts delivery rows in the caller's transaction, as one multi-row INSERT per 500 rows. */
export const insertDeliveries = (m: EntityManager, rows: WebhookDelivery[]): Promise<void> =>
  insertRows(m, 'webhook_deliveries', DELIVERY_COLUMNS, rows);

/** Inserts attempt records in the caller's transaction. */
export const insertAttempts = (m: EntityManager, rows: WebhookAttempt[]): Promise<void> =>
  insertRows(m, 'webhook_attempts', ATTEMPT_COLUMNS, rows);

/**
 * Leases up to `limit` due deliveries to `owner` until `leaseUntil` and returns them: pending, due, and not
 * leased (or the lease expired). PostgreSQL skips rows another worker is claiming (`FOR UPDATE SKIP LOCKED`);
 * SQLite has one writer, so the conditional UPDATE is already atomic.
 */
export async function leaseDueDeliveries(
  m: EntityManager,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<WebhookDelivery[]> {
  const claimed = await sql<WebhookDelivery>(
    m,
    'UPDATE "webhook_deliveries" SET "leaseOwner" = ?, "leaseUntil" = ? WHERE "id" IN (' +
      'SELECT "id" FROM "webhook_deliveries" WHERE "state" = \'pending\' AND "nextAttemptAt" <= ? ' +
      'AND ("leaseUntil" IS NULL OR "leaseUntil" <= ?) ORDER BY "nextAttemptAt", "id" ' +
      LIMIT_PARAM +
      (isPostgres(m.connection) ? ' FOR UPDATE SKIP LOCKED' : '') +
      ') RETURNING *',
    [owner, leaseUntil, now, now, limit],
  );
  return claimed.rows;
}

/** What an attempt writes on its row: `nextAttemptAt` when retried, `finalizedAt` when final. */
export type DeliveryResult = Pick<
  WebhookDelivery,
  'state' | 'attempts' | 'statusCode' | 'durationMs' | 'responseBody' | 'lastError'
> &
  Partial<Pick<WebhookDelivery, 'nextAttemptAt' | 'finalizedAt'>>;

const FINISH =
  'UPDATE "webhook_deliveries" SET "state" = ?, "attempts" = ?, "nextAttemptAt" = COALESCE(?, "nextAttemptAt"), ' +
  '"statusCode" = ?, "durationMs" = ?, "responseBody" = ?, "lastError" = ?, "finalizedAt" = COALESCE(?, "finalizedAt"), ' +
  '"leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "leaseOwner" = ?';
const RELEASE =
  'UPDATE "webhook_deliveries" SET "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "leaseOwner" = ?';
const DEFER =
  'UPDATE "webhook_deliveries" SET "nextAttemptAt" = ?, "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "leaseOwner" = ?';

/** Writes an attempt's result and gives the lease back, only while `owner` holds it; true when written. */
export async function writeDeliveryResult(
  m: EntityManager,
  id: string,
  owner: string,
  u: DeliveryResult,
): Promise<boolean> {
  const r = await sql(m, FINISH, [
    u.state,
    u.attempts,
    u.nextAttemptAt ?? null,
    u.statusCode,
    u.durationMs,
    u.responseBody,
    u.lastError,
    u.finalizedAt ?? null,
    id,
    owner,
  ]);
  return r.affected > 0;
}

/** Gives a lease back untouched, or (with `deferTo`) due again at that time; only while `owner` holds it. */
export async function releaseDelivery(m: EntityManager, id: string, owner: string, deferTo?: string): Promise<boolean> {
  const r = deferTo ? await sql(m, DEFER, [deferTo, id, owner]) : await sql(m, RELEASE, [id, owner]);
  return r.affected > 0;
}

/** A page of one webhook's delivery history, newest first: rows with an id below `before` (when given). */
export async function deliveriesOfWebhook(
  m: EntityManager,
  webhookId: string,
  before: string | undefined,
  limit: number,
): Promise<WebhookDelivery[]> {
  const qb = m.getRepository(WebhookDelivery).createQueryBuilder('d').where('d.webhookId = :webhookId', { webhookId });
  if (before !== undefined) qb.andWhere('d.id < :before', { before });
  return qb.orderBy('d.id', 'DESC').limit(limit).getMany();
}

/** One delivery row of a webhook by its row id, or null. */
export const findDelivery = (m: EntityManager, webhookId: string, id: string): Promise<WebhookDelivery | null> =>
  m.findOneBy(WebhookDelivery, { id, webhookId });

/** One delivery row of a webhook by its `deliveryId` (the UUID sent to the receiver), or null. */
export const findDeliveryByUuid = (
  m: EntityManager,
  webhookId: string,
  deliveryId: string,
): Promise<WebhookDelivery | null> => m.findOneBy(WebhookDelivery, { deliveryId, webhookId });

/** A delivery row known to exist, read again (after its attempt was written). */
export const readDelivery = (db: DataSource | EntityManager, id: string): Promise<WebhookDelivery> =>
  ('connection' in db ? db : db.manager).findOneByOrFail(WebhookDelivery, { id });

/**
 * The deliveries of a webhook that finally failed at or after `since` (not of `exceptType`), for events none of
 * whose deliveries to it succeeded or is still pending; oldest failure first.
 */
export async function failedUndelivered(
  m: EntityManager,
  webhookId: string,
  since: string,
  exceptType: string,
): Promise<WebhookDelivery[]> {
  const failed = await sql<WebhookDelivery>(
    m,
    'SELECT * FROM "webhook_deliveries" d WHERE d."webhookId" = ? AND d."state" = \'failed\' AND d."finalizedAt" >= ? ' +
      'AND d."eventType" <> ? AND NOT EXISTS (SELECT 1 FROM "webhook_deliveries" o WHERE o."webhookId" = d."webhookId" ' +
      'AND o."eventId" = d."eventId" AND o."state" IN (\'pending\', \'succeeded\')) ORDER BY d."finalizedAt", d."id"',
    [webhookId, since, exceptType],
  );
  return failed.rows;
}

/** The state and creation time of a webhook's deliveries created at or after `since`. */
export const deliveryStatesSince = (
  m: EntityManager,
  webhookId: string,
  since: string,
): Promise<Pick<WebhookDelivery, 'state' | 'createdAt'>[]> =>
  m.find(WebhookDelivery, {
    select: { state: true, createdAt: true },
    where: { webhookId, createdAt: MoreThanOrEqual(since) },
  });

/** Attempts of one history row, oldest first. */
export const attemptsOfDelivery = (m: EntityManager, deliveryRowId: string): Promise<WebhookAttempt[]> =>
  m.find(WebhookAttempt, { where: { deliveryRowId }, order: { id: 'ASC' } });

/** Deletes attempt records created before `before`; returns how many. */
export async function deleteAttemptsBefore(ds: DataSource, before: string): Promise<number> {
  const r = await ds.getRepository(WebhookAttempt).delete({ createdAt: LessThan(before) });
  return r.affected ?? 0;
}

/** Deletes every delivery and attempt record of a webhook (before the webhook itself). */
export async function deleteDeliveriesOfWebhook(m: EntityManager, webhookId: string): Promise<void> {
  await m.delete(WebhookAttempt, { webhookId });
  await m.delete(WebhookDelivery, { webhookId });
}

/** A delivery of a room's webhook by its history id or its delivery UUID, with how many redeliveries it had. */
export async function deliveryWithRedeliveries(
  m: EntityManager,
  roomId: string,
  webhookId: string,
  deliveryId: string,
): Promise<{ delivery: WebhookDelivery; redeliveries: number } | null> {
  const delivery = await m.findOne(WebhookDelivery, {
    where: [
      { id: deliveryId, webhookId, roomId },
      { deliveryId, webhookId, roomId },
    ],
  });
  if (!delivery) return null;
  return { delivery, redeliveries: await m.countBy(WebhookDelivery, { redeliveryOf: delivery.id }) };
}

/** The outbox backlog: deliveries waiting to be sent or retried, and the oldest one's creation time. */
export async function pendingBacklog(
  ds: DataSource,
): Promise<{ n: number | string; oldest: string | null } | undefined> {
  const { rows } = await sql<{ n: number | string; oldest: string | null }>(
    ds,
    'SELECT COUNT(*) AS "n", MIN("createdAt") AS "oldest" FROM "webhook_deliveries" WHERE "state" = \'pending\'',
  );
  return rows[0];
}
