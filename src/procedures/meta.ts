import type { ErrorCode } from '../domain/errors.js';
import type { Scope } from '../domain/scopes.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

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
  };
  /**
   * MCP tool name (CONTRACT §5: `<verb>_<noun>`) and title; `description`, the text a model reads (what it does,
   * when to use it, what it returns, in a sentence or two), where it differs from the REST `description`.
   */
  tool: {
    name: string; title: string; description?: string;
    /** A list's item fields its text leaves out unless the call's `fields` names them (the text says which). */
    textOmits?: string[];
  };
  summary: string;
  description: string;
  tags: string[];
  /** The MCP toolset (mcp/toolsets.ts) when it is not the first tag. */
  toolset?: string;
  /** Scope the credential must hold (spec 5.4); null only for the public OpenAPI document. */
  scope: Scope | null;
  /** API units this operation costs (spec 8); also in OpenAPI as `x-api-units`. */
  units: number;
  /** Writes take `Idempotency-Key` and are never read-only tools. */
  kind: 'read' | 'write';
  /** MCP annotations beyond read/write (`destructiveHint`); over MCP a person confirms such a call first (mcp/confirm.ts). */
  destructive?: boolean;
  /** Only an agent run's own delegated token may call it (`complete_agent_run`): `tools/list` shows it to no one else. */
  runOnly?: boolean;
  idempotent?: boolean;
  /** Error codes this operation can answer besides the pipeline's own; `{code, status}` where the spec overrides the status. */
  errors?: (ErrorCode | { code: ErrorCode; status: number })[];
  /** Not exposed as an MCP tool (only `openapi.json`). */
  restOnly?: boolean;
}
