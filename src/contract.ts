// The call contract: what an adapter hands the pipeline (the request context), what the pipeline hands
// back (the response state), what each operation declares about itself (its metadata), the audit row's input and
// the mapping of anything thrown to the one domain error. It sits below the pipeline (src/auth/) and the
// procedures: it imports the domain, db and the wire's plain facts (surfaces, challenges), nothing above them.
import type { EntityManager } from 'typeorm';
import type { AuditEntry } from '../db/entities/index.js';
import type { SqlRun } from '../db/sql.js';
import { isDatabaseUnavailableError, isUnstorableTextError } from '../db/databaseErrors.js';
import type { Actor, AuthenticatedActor } from './domain/actor.js';
import { DomainError, type ErrorCode } from './domain/errors.js';
import type { EventStreamStart } from './domain/eventStreams.js';
import type { Scope } from './domain/scopes.js';
import type { Services } from './domain/services.js';
import type { Challenge } from './http/challenge.js';
import type { SurfaceName } from './http/surfaces.js';

/** The credential a request carries: `Authorization: Bearer …` or `X-Api-Key`. */
export interface Credentials {
  authorization?: string;
  apiKey?: string;
}

/** A file the REST adapter streams after the procedure authorized the download. */
export interface FileDownload {
  path: string;
  contentType: string;
  size: number;
  filename: string;
  sha256: string;
}

/**
 * A content block of an MCP tool result, as the MCP spec (2025-11-25) shapes it; declared here because
 * procedures stay transport-free (they import no MCP SDK).
 */
export type ToolContentBlock =
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType: string; text: string } }
  | { type: 'resource_link'; uri: string; name: string; title?: string; mimeType?: string; size?: number };

/** The 60 s window a request was counted in, for the RateLimit headers. */
export interface RateState {
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
  /**
   * Whom the window counts: the API key, the user behind an OAuth token, or the address of an unauthenticated request.
   */
  scope: 'api_key' | 'user' | 'ip';
}

/** The billing entity's monthly units after this request, for the Svc-Api-Units headers. */
export interface BalanceState {
  limit: number;
  used: number;
  remaining: number;
  /** Units charged to this request: 0 when refused or refunded. */
  cost: number;
  /** ISO 8601 with offset: the next monthly reset. */
  resetsAt: string;
}

/**
 * What a procedure call hands back to its surface besides the output. The pipeline's steps record data
 * here and never headers: the adapters render them (src/http/headers.ts).
 */
export interface ResponseState {
  /** Overrides the success status (idempotent replays). */
  status?: number;
  rate?: RateState;
  balance?: BalanceState;
  /** Seconds to wait before retrying (a spent window). */
  retryAfter?: number;
  /** Why the credential was refused, for the `WWW-Authenticate` challenge. */
  challenge?: Challenge;
  /** Set when a write's Idempotency-Key replayed a stored response: its stored headers. */
  replayed?: { headers: Record<string, string> };
  download?: FileDownload;
  /** What an opened event stream serves (REST `GET /v1/events/stream`); its adapter holds the stream open. */
  eventStream?: EventStreamStart;
  /**
   * MCP only: the content blocks of the tool result (a file's bytes as an image, an embedded text resource or
   * a resource link), in place of the output as JSON text; `structuredContent` still carries the output.
   */
  toolContent?: ToolContentBlock[];
  /** Filled once authenticated, for the audit row. */
  actor?: Actor;
  /** Units charged, net of a refund: the audit row's `units`. */
  units: number;
}

/**
 * A claim held by one request: the key's row and the claim's own token, kept in `statusCode` while the row is
 * `in_flight` (a negative number, never a status), so that only the request holding it can settle the key.
 */
export interface KeyClaim {
  id: string;
  token: number;
  /** The success status the stored answer will carry. */
  status: number;
  /** The answer stored with the key in the write's own transaction (`inWriteTransaction`), once committed. */
  stored?: { body: unknown };
}

/**
 * The transport-bound context of one call, built by an adapter (REST or MCP); the pipeline middlewares and
 * the handlers see only this.
 */
export interface RequestContext {
  services: Services;
  rateLimiter: RateLimiter;
  /** The surface the call came in on: its audience and own scopes are in src/http/surfaces.ts. */
  surface: SurfaceName;
  requestId: string;
  /** HTTP method, or `TOOL` for MCP calls. */
  method: string;
  /** Concrete path (REST) or tool name (MCP): the idempotency scope. */
  path: string;
  /** The template (`/v1/rooms/{roomId}`) or tool name: the audit's route pattern. */
  routePattern: string;
  clientIp: string;
  credentials: Credentials;
  /**
   * The actor the surface already authenticated from these same credentials in this HTTP request (MCP checks
   * the credential at the door before reading JSON-RPC): the pipeline then does not look it up again.
   */
  authenticated?: AuthenticatedActor;
  idempotencyKey?: string;
  /** The key this write holds, once the pipeline claimed it: its transaction stores the key's outcome. */
  keyClaim?: KeyClaim;
  /** A body the adapter could not read (malformed, oversized, wrong type), reported after authentication. */
  inputError?: DomainError;
  out: ResponseState;
}

export const newResponseState = (): ResponseState => ({ units: 0 });

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What a destructive operation acts on, as its caller sees it now: what a person confirms, and what binds it. */
export interface ConfirmTarget {
  id: string;
  /** A digest of what a change to the target changes (its `updatedAt`, state, counts). */
  version: string;
  /** The target's name and current state, for the human. */
  shown: string;
}

/**
 * Reads a destructive operation's target from the call's raw arguments, in the caller's rights, through domain
 * functions: null when there is none to show, or a refusal of the room check; the call then runs as it would and
 * answers its own refusal.
 */
export type ConfirmTargetOf = (
  m: EntityManager,
  actor: Actor,
  args: Record<string, unknown>,
) => Promise<ConfirmTarget | null>;

/**
 * What each procedure declares about itself; the REST and MCP adapters and the pipeline read nothing else.
 */
export interface ProcedureMeta {
  /** REST binding under /v1: path in OpenAPI form (`/v1/rooms/{roomId}`). */
  http: {
    method: HttpMethod;
    path: string;
    /** Status of a success (default 200). */
    successStatus?: number;
    /**
     * The body is raw bytes (file upload): carried to this input field as base64, with its Content-Type.
     * `mcpOnly`: input fields that stand for the body over MCP (`text`), not REST query parameters.
     */
    rawBody?: { field: string; contentTypeField: string; mcpOnly?: string[] };
    /** The REST response streams a file instead of JSON. */
    download?: boolean;
    /** The REST response is a stream of server-sent events (`text/event-stream`) that stays open. */
    stream?: boolean;
  };
  /**
   * MCP tool name (`<verb>_<noun>`) and title; `description`, the text a model reads (what it does,
   * when to use it, what it returns, in a sentence or two), where it differs from the REST `description`.
   */
  tool: {
    name: string;
    title: string;
    description?: string;
    /** A list's item fields its text leaves out unless the call's `fields` names them (the text says which). */
    textOmits?: string[];
  };
  summary: string;
  description: string;
  tags: string[];
  /** The MCP toolset (mcp/tools/toolsets.ts) when it is not the first tag. */
  toolset?: string;
  /** Scope the credential must hold; null only for the public OpenAPI document. */
  scope: Scope | null;
  /** API units this operation costs; also in OpenAPI as `x-api-units`. */
  units: number;
  /** Writes take `Idempotency-Key` and are never read-only tools. */
  kind: 'read' | 'write';
  /**
   * MCP annotations beyond read/write (`destructiveHint`); over MCP a person confirms such a call first
   * (mcp/tools/confirm.ts), shown what `confirmTarget` reads.
   */
  destructive?: boolean;
  /** The target a person confirms before a destructive call over MCP. */
  confirmTarget?: ConfirmTargetOf;
  /**
   * Only an agent run's own delegated token may call it (`complete_agent_run`): `tools/list` shows it to no one else.
   */
  runOnly?: boolean;
  idempotent?: boolean;
  /**
   * Error codes this operation can answer besides the pipeline's own; `{code, status}` where the operation answers
   * it with another status than the catalog's.
   */
  errors?: (ErrorCode | { code: ErrorCode; status: number })[];
  /** Not exposed as an MCP tool (only `openapi.json`). */
  restOnly?: boolean;
  /**
   * Its row of the REST guide's operations table (docs/rest-api.md, written by `npm run generate`) where a cell
   * says more than the fields above: the tool, scope and units cells as Markdown, `what` in place of the summary.
   */
  docs?: { tool?: string; scope?: string; units?: string; what?: string };
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `subject` against `limit` per 60 s window. */
  consume(subject: string, limit: number): Promise<RateLimitResult>;
  /**
   * The same count, run at once inside a group's work (db/sql.ts `sqliteGroupWork`: SQLite, whose writes of a turn
   * run in order in one transaction), so that what depends on it (the charge, the audit row) is decided and written
   * in the same commit. Absent on PostgreSQL, where statements run on pooled connections in no set order.
   */
  consumeIn?(run: SqlRun, subject: string, limit: number): RateLimitResult;
}

/** `agentRunId`: the run a delegated token acted for; absent for every other credential. */
export type AuditInput = Omit<AuditEntry, 'id' | 'createdAt' | 'agentRunId'> & { agentRunId?: string | null };

/** 503 `service_unavailable`: the database was busy; nothing was written (the transaction rolled back). */
export const serviceUnavailable = (cause: unknown) =>
  new DomainError('service_unavailable', 'The service is busy; retry the request shortly', {
    details: { retryAfterSeconds: 1 },
    cause,
  });

/** Maps anything a call threw to the one domain error; the procedures' (src/procedures/errors.ts) also reads tRPC's. */
export type ErrorMapping = (err: unknown) => DomainError;

/**
 * The mapping below tRPC: domain errors as they are, a busy database as 503 `service_unavailable` (to
 * retry), text the database cannot store as 400, anything else as a generic 500 that leaks nothing (the
 * cause is kept for the log).
 */
export function domainErrorOf(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (isDatabaseUnavailableError(err)) return serviceUnavailable(err);
  if (isUnstorableTextError(err))
    return new DomainError('validation_error', 'Strings must not contain NUL characters', { cause: err });
  return new DomainError('internal_error', 'Internal server error', { cause: err });
}
