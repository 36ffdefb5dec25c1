import { randomInt } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/transaction.js';
import {
  claimKeyRow,
  clearDeadKey,
  completeKeyRow,
  deleteExpiredKeys,
  insertKeyIfAbsent,
  keyRow,
  releaseKeyRow,
  replaceKeyResponse,
  storeKeyOutcome,
} from '../../db/stores/idempotency.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, validationError } from '../domain/errors.js';
import { sha256Hex } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import type { KeyClaim, ProcedureMeta, RequestContext } from '../contract.js';

export type { KeyClaim };
import { CONTENT_TYPE_HEADER, IDEMPOTENCY_KEY_HEADER } from '../http/headers.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * An unfinished claim older than this is taken over by the next request with its key. Safe even if its
 * request still runs: a write stores its key's outcome in its own transaction, on the condition that its claim
 * is still the one in the row, so the request whose claim was taken over rolls back and writes nothing.
 */
export const IDEMPOTENCY_STALE_CLAIM_MS = 60 * 1000;

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

export type BeginResult = { kind: 'run'; id: string; token: number } | { kind: 'replay'; response: StoredResponse };

/**
 * Claims the key for this credential, method and path: the row is inserted if absent,
 * then claimed by one atomic compare-and-set (`statusCode` from null to this claim's token), so exactly one of
 * many concurrent requests runs. The others read the row: another body gives 422 `idempotency_key_reused`, a
 * request still running 409 `idempotency_key_in_use`, a finished one its stored response.
 */
export async function beginIdempotent(
  s: Services,
  scope: { credentialId: string; method: string; path: string; key: string },
  print: string,
): Promise<BeginResult> {
  const id = sha256Hex(`${scope.credentialId}\n${scope.method}\n${scope.path}\n${scope.key}`);
  const now = s.now();
  // a claim nobody finished (the process died, or the database failed while releasing it) is taken over
  // after IDEMPOTENCY_STALE_CLAIM_MS instead of answering 409 for 24 hours: its write, if it still runs, cannot
  // commit any more (`storeOutcome`)
  await clearDeadKey(s.ds, id, iso(now), iso(new Date(now.getTime() - IDEMPOTENCY_STALE_CLAIM_MS)));
  await insertKeyIfAbsent(s.ds, {
    id,
    fingerprint: print,
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + IDEMPOTENCY_TTL_MS)),
  });
  const token = -randomInt(1, 2 ** 31 - 1);
  if (await claimKeyRow(s.ds, id, print, token)) return { kind: 'run', id, token };
  const existing = await keyRow(s.ds, id);
  if (existing && existing.fingerprint !== print) {
    throw new DomainError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body');
  }
  if (existing?.state === 'done') return { kind: 'replay', response: existing.response as StoredResponse };
  throw new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress');
}

/**
 * Marks the key done with its answer, inside the write's transaction `m`, on the condition that the row is
 * still this claim's: otherwise (the claim was taken over, or forgotten) it throws and the write rolls back
 * with it. So a key is either done with its stored answer, or its write never committed.
 */
async function storeOutcome(m: EntityManager, claim: KeyClaim, response: StoredResponse): Promise<void> {
  if (!(await storeKeyOutcome(m, claim.id, claim.token, response.status, JSON.stringify(response)))) {
    throw new DomainError('idempotency_key_in_use', 'This Idempotency-Key was taken over by another request');
  }
}

const jsonAnswer = (status: number, body: unknown): StoredResponse => ({
  status,
  body,
  headers: { [CONTENT_TYPE_HEADER]: 'application/json; charset=utf-8' },
});

/**
 * Runs a write's transaction (`inTransaction`); `fn` returns the operation's answer. When the request holds an
 * Idempotency-Key, the key is marked done with that answer in the same transaction: both commit, or neither.
 */
export function inWriteTransaction<T>(ctx: RequestContext, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const claim = ctx.keyClaim;
  if (!claim) return inTransaction(ctx.services, fn);
  return inTransaction(ctx.services, async (m) => {
    const body = await fn(m);
    await storeOutcome(m, claim, jsonAnswer(claim.status, body));
    claim.stored = { body };
    return body;
  }).catch((err: unknown) => {
    claim.stored = undefined;
    throw err;
  });
}

/**
 * Stores the answer of a write whose transaction did not store it (`inWriteTransaction`), after the fact, as
 * long as the claim is still this request's.
 */
export async function completeIdempotent(s: Services, claim: KeyClaim, response: StoredResponse): Promise<void> {
  await completeKeyRow(s.ds, claim.id, claim.token, response.status, response);
}

/** Releases still to retry: the database failed when a request released its key. */
const pendingReleases = new Map<string, { s: Services; claim: KeyClaim; tries: number }>();
const MAX_PENDING_RELEASES = 10_000;
const RELEASE_RETRY_MS = 1000;
const RELEASE_TRIES = 60;

/**
 * The request failed: forget the key so the client may retry with it (only while the row is still this
 * claim's and unfinished; a key whose write committed keeps its answer). When the database cannot be reached,
 * the release is tried again every second for a minute, after which the claim is stale anyway.
 */
export async function abortIdempotent(s: Services, claim: KeyClaim): Promise<void> {
  try {
    await releaseClaim(s, claim);
  } catch (err) {
    s.log.error({ err }, 'idempotency key release failed; retrying');
    if (pendingReleases.size < MAX_PENDING_RELEASES) {
      pendingReleases.set(claim.id, { s, claim, tries: 0 });
      scheduleReleases();
    }
  }
}

const releaseClaim = (s: Services, claim: KeyClaim) => releaseKeyRow(s.ds, claim.id, claim.token);

let releaseTimer: NodeJS.Timeout | undefined;
function scheduleReleases(): void {
  if (releaseTimer || pendingReleases.size === 0) return;
  releaseTimer = setTimeout(() => {
    // (retryReleases catches every failure itself)
    void retryReleases().then(
      () => {
        releaseTimer = undefined;
        scheduleReleases();
      },
      () => undefined,
    );
  }, RELEASE_RETRY_MS);
  releaseTimer.unref();
}

async function retryReleases(): Promise<void> {
  for (const [id, p] of [...pendingReleases]) {
    if (!p.s.ds.isInitialized || ++p.tries > RELEASE_TRIES) {
      pendingReleases.delete(id);
      continue;
    }
    try {
      await releaseClaim(p.s, p.claim);
      pendingReleases.delete(id);
    } catch {
      // still unreachable: next round
    }
  }
}

export async function purgeExpiredIdempotency(s: Services): Promise<number> {
  return deleteExpiredKeys(s.ds, iso(s.now()));
}

/** What the idempotency step decided: replay a stored response, or run holding the claim. */
export type Claim = { kind: 'replay'; body: unknown } | { kind: 'run'; claim: KeyClaim };

/**
 * The pipeline's idempotency step, for a write with an `Idempotency-Key` (parsed by
 * `parseIdempotencyKey`): claims the key for this credential, method and path. A replay records its status and stored
 * headers on the response state (`replayed`) and returns the stored body.
 */
export async function claimKey(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  actor: Actor,
  key: string,
  input: unknown,
): Promise<Claim> {
  const begun = await beginIdempotent(
    ctx.services,
    { credentialId: `${actor.credential.method}:${actor.credential.id}`, method: ctx.method, path: ctx.path, key },
    fingerprint(input),
  );
  if (begun.kind === 'run') {
    return { kind: 'run', claim: { id: begun.id, token: begun.token, status: meta?.http.successStatus ?? 200 } };
  }
  ctx.out.status = begun.response.status;
  ctx.out.replayed = { headers: begun.response.headers };
  return { kind: 'replay', body: begun.response.body };
}

/**
 * After the handler: stores its response under the key, unless its transaction stored it already
 * (`inWriteTransaction`), or forgets the key so the client may retry.
 */
export async function settleKey(
  ctx: RequestContext,
  claim: KeyClaim,
  result: { ok: true; data: unknown } | { ok: false },
) {
  if (!result.ok) return abortIdempotent(ctx.services, claim);
  const answer = jsonAnswer(ctx.out.status ?? claim.status, result.data);
  // (the answer as the output schema gave it; the same as the stored one unless the schema rewrote it)
  if (claim.stored && JSON.stringify(claim.stored.body) === JSON.stringify(answer.body)) return;
  if (claim.stored) {
    await replaceKeyResponse(ctx.services.ds, claim.id, answer);
    return;
  }
  await completeIdempotent(ctx.services, claim, answer);
}
