import { LessThan, type DataSource, type EntityManager } from 'typeorm';
import { IdempotencyRecord } from '../entities/index.js';

// Idempotency keys (`idempotency_keys`): a row per credential, method, path and key, claimed by a compare-and-set
// on `statusCode` and marked done with the stored answer. TypeORM's entity manager and query builder, but the
// outcome stored inside a write's transaction, which is one statement on that transaction's runner.

const records = (ds: DataSource) => ds.getRepository(IdempotencyRecord);

/** Deletes the row when it expired before `now`, or when it is a claim nobody finished, made before `staleBefore`. */
export async function clearDeadKey(ds: DataSource, id: string, now: string, staleBefore: string): Promise<void> {
  const repo = records(ds);
  await repo.delete({ id, expiresAt: LessThan(now) });
  await repo.delete({ id, state: 'in_flight', createdAt: LessThan(staleBefore) });
}

/** Inserts an unclaimed row for the key unless one exists. */
export async function insertKeyIfAbsent(
  ds: DataSource,
  row: { id: string; fingerprint: string; createdAt: string; expiresAt: string },
): Promise<void> {
  await records(ds)
    .createQueryBuilder()
    .insert()
    .values({ ...row, state: 'in_flight', statusCode: null })
    .orIgnore()
    .execute();
}

/** Claims the unclaimed row of this fingerprint with `token` (compare-and-set): true for the one winner. */
export async function claimKeyRow(ds: DataSource, id: string, fingerprint: string, token: number): Promise<boolean> {
  const claim = await records(ds)
    .createQueryBuilder()
    .update()
    .set({ statusCode: token })
    .where('id = :id AND state = :st AND "statusCode" IS NULL AND fingerprint = :fp', {
      id,
      st: 'in_flight',
      fp: fingerprint,
    })
    .execute();
  return (claim.affected ?? 0) === 1;
}

export const keyRow = (ds: DataSource, id: string): Promise<IdempotencyRecord | null> => records(ds).findOneBy({ id });

const STORE_OUTCOME =
  'UPDATE "idempotency_keys" SET "state" = \'done\', "statusCode" = $1, "response" = $2 ' +
  'WHERE "id" = $3 AND "state" = \'in_flight\' AND "statusCode" = $4';
const STORE_OUTCOME_SQLITE = STORE_OUTCOME.replace(/\$\d/g, '?');

/**
 * Marks the claimed row done with `response` (JSON text) inside the write's transaction `m`, only while the row
 * is still the claim `token`'s: true when it was.
 */
export async function storeKeyOutcome(
  m: EntityManager,
  id: string,
  token: number,
  status: number,
  response: string,
): Promise<boolean> {
  const postgres = m.connection.options.type === 'postgres';
  const r = await m.queryRunner!.query(
    postgres ? STORE_OUTCOME : STORE_OUTCOME_SQLITE,
    [status, response, id, token],
    true,
  );
  return r.affected === 1;
}

/** Marks the claimed row done with `response`, after the fact, while the row is still the claim `token`'s. */
export async function completeKeyRow(ds: DataSource, id: string, token: number, status: number, response: object) {
  await records(ds).update(
    { id, state: 'in_flight', statusCode: token },
    { state: 'done', statusCode: status, response },
  );
}

/** Replaces the stored answer of a done row. */
export async function replaceKeyResponse(ds: DataSource, id: string, response: object): Promise<void> {
  await records(ds).update({ id, state: 'done' }, { response });
}

/** Forgets an unfinished claim, while it is still the claim `token`'s. */
export async function releaseKeyRow(ds: DataSource, id: string, token: number): Promise<void> {
  await records(ds).delete({ id, state: 'in_flight', statusCode: token });
}

/** Deletes every row expired before `now`; how many. */
export async function deleteExpiredKeys(ds: DataSource, now: string): Promise<number> {
  return (await records(ds).delete({ expiresAt: LessThan(now) })).affected ?? 0;
}
