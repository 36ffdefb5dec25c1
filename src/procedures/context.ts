import type { RateLimiter } from '../auth/rateLimit.js';
import type { Credentials } from '../auth/credentials.js';
import type { Actor, AuthenticatedActor } from '../domain/actor.js';
import type { DomainError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';

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

/** What a procedure call hands back to its surface besides the output. */
export interface ResponseState {
  headers: Record<string, string>;
  /** Overrides the success status (idempotent replays). */
  status?: number;
  download?: FileDownload;
  /**
   * MCP only: the content blocks of the tool result (a file's bytes as an image, an embedded text resource or
   * a resource link), in place of the output as JSON text; `structuredContent` still carries the output.
   */
  toolContent?: ToolContentBlock[];
  /** Filled once authenticated, for the audit row. */
  actor?: Actor;
  units: number;
}

/**
 * The transport-bound context of one call, built by an adapter (REST or MCP); the pipeline middlewares and
 * the handlers see only this.
 */
export interface RequestContext {
  services: Services;
  rateLimiter: RateLimiter;
  surface: 'rest' | 'mcp';
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
  /** OAuth audience this surface accepts (`BASE_URL/v1` or `BASE_URL/mcp`). */
  audience: string;
  /** Scopes the surface itself requires besides the operation's (MCP: `mcp:tools`). */
  surfaceScopes: string[];
  idempotencyKey?: string;
  /** A body the adapter could not read (malformed, oversized, wrong type), reported after authentication. */
  inputError?: DomainError;
  out: ResponseState;
}

export const newResponseState = (): ResponseState => ({ headers: {}, units: 0 });
