import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';
import type { ProcedureMeta } from './meta.js';

/**
 * The surface an answer goes out on: REST reads a body itself (413/415), an MCP tool call has its arguments already.
 */
export type Surface = 'rest' | 'mcp';

/** Error codes by HTTP status, in status order; each list in catalog order. */
export type ErrorCodesByStatus = Record<number, ErrorCode[]>;

const CATALOG_ORDER = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The codes every operation under `/v1/rooms/{roomId}` can answer: an unknown room, or an unknown object in it. */
const ROOM_CODES = ['not_found', 'room_not_found'] as const satisfies readonly ErrorCode[];
const inRoom = (meta: ProcedureMeta) => meta.http.path.startsWith('/v1/rooms/{roomId}');

/**
 * What an operation can answer besides its success, derived from its metadata alone: the one list that the
 * OpenAPI document (per-status responses) and the MCP tool (`_meta["svc/errors"]`) show.
 * - every call: 400 `validation_error` (schema), 401, 403 scope/audience, 429 window/units, 500, 503;
 * - an operation under `/v1/rooms/{roomId}`: 404 `not_found` and `room_not_found`;
 * - a write: the idempotency answers 409 `idempotency_key_in_use` and 422 `idempotency_key_reused`, and over REST
 *   the body read (413 `payload_too_large`; 408 `request_timeout`; 415 `unsupported_media_type` for a JSON body);
 * - the operation's own `meta.errors` (business rules, `forbidden`, …), with the status the spec gives them.
 */
/** The codes any call can answer, whatever the operation (the pipeline's own). */
export const EVERY_CALL_CODES = [
  'validation_error',
  'unauthorized',
  'insufficient_scope',
  'invalid_audience',
  'rate_limited',
  'api_units_exhausted',
  'internal_error',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

export function errorCodesOf(meta: ProcedureMeta, surface: Surface = 'rest'): ErrorCodesByStatus {
  const codes: { code: ErrorCode; status: number }[] = [];
  const add = (code: ErrorCode, status: number = ERROR_STATUS[code]) => codes.push({ code, status });
  for (const c of EVERY_CALL_CODES) add(c);
  if (inRoom(meta)) for (const c of ROOM_CODES) add(c);
  if (meta.kind === 'write') {
    add('idempotency_key_in_use');
    add('idempotency_key_reused');
    if (surface === 'rest') {
      add('payload_too_large');
      add('request_timeout');
      if (!meta.http.rawBody) add('unsupported_media_type');
    }
  }
  for (const e of meta.errors ?? []) {
    if (typeof e === 'string') add(e);
    else add(e.code, e.status);
  }
  const byStatus: ErrorCodesByStatus = {};
  for (const { code, status } of codes) {
    const list = (byStatus[status] ??= []);
    if (!list.includes(code)) list.push(code);
  }
  for (const list of Object.values(byStatus)) list.sort((a, b) => CATALOG_ORDER.indexOf(a) - CATALOG_ORDER.indexOf(b));
  return Object.fromEntries(Object.entries(byStatus).sort(([a], [b]) => Number(a) - Number(b)));
}

/**
 * `errorCodesOf` without the codes every call can answer (EVERY_CALL_CODES), for a write the idempotency answers
 * every write can give, for a tool of a room (`roomId`) the 404 `not_found` and `room_not_found` every such tool
 * can give, and for a write in a room the 403 `forbidden` every such write can give: what sets this operation
 * apart, as an MCP tool lists it (a model's context pays for each repetition; the MCP guide names the common codes
 * once). A common code stays where the operation answers it at another status than the catalog's (422
 * validation_error of a stored payload).
 */
export function ownErrorCodesOf(meta: ProcedureMeta, surface: Surface): ErrorCodesByStatus {
  const common = new Set<ErrorCode>([
    ...EVERY_CALL_CODES,
    'idempotency_key_in_use',
    'idempotency_key_reused',
    ...(inRoom(meta) ? ROOM_CODES : []),
    // every write in a room checks the caller's role there
    ...(inRoom(meta) && meta.kind === 'write' ? (['forbidden'] as const) : []),
  ]);
  const out: ErrorCodesByStatus = {};
  for (const [status, codes] of Object.entries(errorCodesOf(meta, surface))) {
    const kept = codes.filter((c) => !common.has(c) || ERROR_STATUS[c] !== Number(status));
    if (kept.length) out[Number(status)] = kept;
  }
  return out;
}
