import { LessThan } from 'typeorm';
import { IdempotencyRecord } from '../../db/entities/index.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, validationError } from '../domain/errors.js';
import { sha256Hex } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import type { ProcedureMeta, RequestContext } from '../contract.js';
import { CONTENT_TYPE_HEADER, IDEMPOTENCY_KEY_HEADER } from '../http/headers.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** No request runs this long: an unfinished claim older than this is abandoned. */
export const IDEMPOTENCY_STALE_CLAIM_MS = 5 * 60 * 1000;

/** A stored response, replayed as it was. */
export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * Parses an `Idempotency-Key` header: 1–255 printable ASCII characters; the quoted form of the IETF draft
 * (`"abc"`, something between the quotes) is accepted and unquoted. Throws 400 validation_error otherwise.
 */
export function parseIdempotencyKey(raw: string): string {
  // (`""` is no quoted key: taken as it is, like any other two printable characters)
  const key = /^".+"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw validationError('Idempotency-Key must be 1-255 printable ASCII characters', {
      field: IDEMPOTENCY_KEY_HEADER,
    });
  }
  return key;
}

/** A fingerprint of the request's input, independent of key order. */
export function fingerprint(input: unknown): string {
  const canon = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
        )
      : Array.isArray(v)
        ? v.map(canon)
        : v;
  return sha256Hex(JSON.stringify(canon(input) ?? null));
}

export type BeginResult = { kind: 'run'; id: string } | { kind: 'replay'; response: StoredResponse };

/**
 * Claims the key for this credential, method and path: the row is inserted if absent,
 * then claimed by one atomic compare-and-set (`claim` from null to 1), so exactly one of many concurrent
 * requests runs. The others read the row: another body gives 422 `idempotency_key_reused`, a request still
 * running 409 `idempotency_key_in_use`, a finished one its stored response.
 */
export async function beginIdempotent(
  s: Services,
  scope: { credentialId: string; method: string; path: string; key: string },
  print: string,
): Promise<BeginResult> {
  const id = sha256Hex(`${scope.credentialId}\n${scope.method}\n${scope.path}\n${scope.key}`);
  const now = s.now();
  const repo = s.ds.getRepository(IdempotencyRecord);
  await repo.delete({ id, expiresAt: LessThan(iso(now)) });
  // a claim nobody finished (the process died, or the database failed while releasing it) is taken over
  // after IDEMPOTENCY_STALE_CLAIM_MS instead of answering 409 for 24 hours
  await repo.delete({
    id,
    state: 'in_flight',
    createdAt: LessThan(iso(new Date(now.getTime() - IDEMPOTENCY_STALE_CLAIM_MS))),
  });
  await repo
    .createQueryBuilder()
    .insert()
    .values({
      id,
      fingerprint: print,
      state: 'in_flight',
      statusCode: null,
      createdAt: iso(now),
      expiresAt: iso(new Date(now.getTime() + IDEMPOTENCY_TTL_MS)),
    })
    .orIgnore()
    .execute();
  const claim = await repo
    .createQueryBuilder()
    .update()
    .set({ statusCode: 0 })
    .where('id = :id AND state = :st AND "statusCode" IS NULL AND fingerprint = :fp', {
      id,
      st: 'in_flight',
      fp: print,
    })
    .execute();
  if ((claim.affected ?? 0) === 1) return { kind: 'run', id };
  const existing = await repo.findOneBy({ id });
  if (existing && existing.fingerprint !== print) {
    throw new DomainError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body');
  }
  if (existing?.state === 'done') return { kind: 'replay', response: existing.response as StoredResponse };
  throw new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress');
}

export async function completeIdempotent(s: Services, id: string, response: StoredResponse): Promise<void> {
  await s.ds.getRepository(IdempotencyRecord).update({ id }, { state: 'done', statusCode: response.status, response });
}

/** The request failed: forget the key so the client may retry with it. */
export async function abortIdempotent(s: Services, id: string): Promise<void> {
  await s.ds.getRepository(IdempotencyRecord).delete({ id });
}

export async function purgeExpiredIdempotency(s: Services): Promise<number> {
  const r = await s.ds.getRepository(IdempotencyRecord).delete({ expiresAt: LessThan(iso(s.now())) });
  return r.affected ?? 0;
}

/** What the idempotency step decided: replay a stored response, or run holding the claim (`claimId`). */
export type Claim = { kind: 'replay'; body: unknown } | { kind: 'run'; claimId: string };

/**
 * The pipeline's idempotency step, for a write with an `Idempotency-Key` (parsed by
 * `parseIdempotencyKey`): claims the key for this credential, method and path. A replay records its status and stored
 * headers on the response state (`replayed`) and returns the stored body.
 */
export async function claimKey(ctx: RequestContext, actor: Actor, key: string, input: unknown): Promise<Claim> {
  const begun = await beginIdempotent(
    ctx.services,
    { credentialId: `${actor.credential.method}:${actor.credential.id}`, method: ctx.method, path: ctx.path, key },
    fingerprint(input),
  );
  if (begun.kind === 'run') return { kind: 'run', claimId: begun.id };
  ctx.out.status = begun.response.status;
  ctx.out.replayed = { headers: begun.response.headers };
  return { kind: 'replay', body: begun.response.body };
}

/** After the handler: stores its response under the key, or forgets the key so the client may retry. */
export async function settleKey(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  claimId: string,
  result: { ok: true; data: unknown } | { ok: false },
) {
  if (!result.ok) return abortIdempotent(ctx.services, claimId);
  await completeIdempotent(ctx.services, claimId, {
    status: ctx.out.status ?? meta?.http.successStatus ?? 200,
    body: result.data,
    headers: { [CONTENT_TYPE_HEADER]: 'application/json; charset=utf-8' },
  });
}
