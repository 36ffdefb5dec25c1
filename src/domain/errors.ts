/** The error codes of the API (docs/rest-api.md#responses-and-errors), with their default HTTP status. */
export const ERROR_STATUS = {
  unauthorized: 401,
  insufficient_scope: 403,
  invalid_audience: 403,
  forbidden: 403,
  not_found: 404,
  room_not_found: 404,
  method_not_allowed: 405,
  /** The input does not match the operation's schema (the OpenAPI document / the MCP tool's inputSchema). */
  validation_error: 400,
  /**
   * The input matches the schema but breaks a business rule the schema cannot state (dates in order, assignee a
   * member…).
   */
  rule_violation: 400,
  invalid_state: 409,
  conflict: 409,
  webhook_inactive: 409,
  /** The agent connector named is inactive. */
  connector_inactive: 409,
  idempotency_key_in_use: 409,
  /** The request body did not arrive within SVC_BODY_TIMEOUT_MS of the request (the connection is closed). */
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  api_units_exhausted: 429,
  internal_error: 500,
  /** The storage of uploaded files is full (RFC 4918 §11.5): nothing was stored, the client may retry later. */
  insufficient_storage: 507,
  /** The database stayed busy (locked by another writer) past its timeout: nothing was written; retry. */
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface DomainErrorOptions {
  details?: Record<string, unknown>;
  /** Overrides the table's status where the spec decides another (e.g. 422 validation_error on redeliver). */
  status?: number;
  cause?: unknown;
}

/** The one error of the service: rendered as the REST envelope, an MCP `isError` result, or RFC 6749 JSON. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, opts: DomainErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.name = 'DomainError';
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code];
    this.details = opts.details;
  }
}

export const notFound = (what = 'Resource') => new DomainError('not_found', `${what} not found`);
export const roomNotFound = () => new DomainError('room_not_found', 'Room not found');
export const validationError = (message: string, details?: Record<string, unknown>) =>
  new DomainError('validation_error', message, { details });
/**
 * A business rule the input breaks although it matches the schema: 400 `rule_violation`, distinct from
 * `validation_error`.
 */
export const ruleViolation = (message: string, details?: Record<string, unknown>) =>
  new DomainError('rule_violation', message, { details });
export const forbidden = (message: string) => new DomainError('forbidden', message);
