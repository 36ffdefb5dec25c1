import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorEnvelope } from '../src/http/envelope.js';
import type { ToolOutcome } from './invokeTool.js';

/** `_meta` key carrying the request id of the call (the audit row's `requestId`). */
export const REQUEST_ID_META = 'svc/requestId';
/** `_meta` key set to true when a write's `idempotencyKey` replayed the first result (REST: `Idempotent-Replayed`). */
export const REPLAYED_META = 'svc/idempotentReplayed';

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A procedure's outcome as an MCP tool result. Success: the output as `structuredContent` (what the tool's
 * `outputSchema` describes) and, as content, the blocks the procedure chose (a file as an image, embedded
 * text or a link) or else the output as JSON text. Failure (MCP spec 2025-11-25 "Tool Execution Errors",
 * input validation included, SEP-1303): `isError: true` with the REST error envelope as JSON text and no
 * `structuredContent`, which the output schema does not describe. `_meta` carries the request id, and marks
 * an idempotent replay.
 */
export function toToolResult(outcome: ToolOutcome): CallToolResult {
  const _meta: Record<string, unknown> = { [REQUEST_ID_META]: outcome.requestId };
  if (outcome.out.replayed) _meta[REPLAYED_META] = true;
  if (!outcome.ok) {
    const body = errorEnvelope(outcome.error, outcome.requestId);
    return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true, _meta };
  }
  return {
    content: outcome.out.toolContent ?? [{ type: 'text', text: JSON.stringify(outcome.data ?? null) }],
    ...(isObject(outcome.data) ? { structuredContent: outcome.data } : {}),
    _meta,
  };
}
