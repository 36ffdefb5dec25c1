import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DomainError } from '../src/domain/errors.js';
import type { ToolOutcome } from './invokeTool.js';

/** `_meta` key carrying the request id of the call (the audit row's `requestId`). */
export const REQUEST_ID_META = 'svc/requestId';

/** The spec's error envelope (2.4), the same body REST answers with. */
export const errorEnvelope = (e: DomainError, requestId: string) => ({
  error: { code: e.code, message: e.message, requestId, details: e.details ?? {} },
});

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A procedure's outcome as an MCP tool result: the output as `structuredContent` and as JSON text, or the
 * error envelope with `isError: true` (ARCHITECTURE: "MCP returns the same envelope as a tool result").
 */
export function toToolResult(outcome: ToolOutcome): CallToolResult {
  const _meta = { [REQUEST_ID_META]: outcome.requestId };
  if (!outcome.ok) {
    const body = errorEnvelope(outcome.error, outcome.requestId);
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true, _meta };
  }
  const text = JSON.stringify(outcome.data ?? null);
  return {
    content: [{ type: 'text', text }],
    ...(isObject(outcome.data) ? { structuredContent: outcome.data } : {}),
    _meta,
  };
}
