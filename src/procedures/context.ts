import type { RateLimiter } from '../auth/rateLimit.js';
import type { Credentials } from '../auth/credentials.js';
import type { Actor, AuthenticatedActor } from '../domain/actor.js';
import type { DomainError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import type { Challenge } from '../http/challenge.js';
import type { SurfaceName } from '../http/surfaces.js';

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

/** The 60 s window a request was counted in (spec 5.5 condition 5), for the RateLimit headers. */
export interface RateState {
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
  /** Whom the window counts: the API key, the user behind an OAuth token, or the address of an unauthenticated request. */
  scope: 'api_key' | 'user' | 'ip';
}

/** The billing entity's monthly units after this request (spec 5.5 condition 6), for the Svc-Api-Units headers. */
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
  /** A body the adapter could not read (malformed, oversized, wrong type), reported after authentication. */
  inputError?: DomainError;
  out: ResponseState;
}

export const newResponseState = (): ResponseState => ({ units: 0 });
