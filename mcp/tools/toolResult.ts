import { ProtocolError, ProtocolErrorCode, specTypeSchemas, type CallToolResult } from '@modelcontextprotocol/server';
import { errorEnvelope } from '../../src/http/envelope.js';
import type { ToolOutcome } from './invokeTool.js';
import { resultText } from './toolText.js';

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
    content: outcome.out.toolContent ?? [
      { type: 'text', text: textOf(outcome.data, JSON.stringify(outcome.data ?? null), outcome) },
    ],
    ...(isObject(outcome.data) ? { structuredContent: outcome.data } : {}),
    _meta,
  };
}

/**
 * The text block of a success: the compact text a model reads (toolText.ts), or the JSON of an output that is not an
 * object.
 */
function textOf(data: unknown, json: string, outcome: ToolOutcome & { ok: true }): string {
  return isObject(data) && outcome.view ? resultText(data, json, outcome.view) : json;
}

/**
 * The tool result exactly as the SDK's `Server` would send it after its own check of a `tools/call`
 * result (the spec's `CallToolResult` schema, `specTypeSchemas` of @modelcontextprotocol/server),
 * made once instead of twice. The common success (an object output, no content blocks of its own) is
 * built directly in the shape that check returns (`_meta`, `content`, `structuredContent`: the schema's
 * key order, what the wire has always carried). Anything else (an error, a procedure's own blocks, an output
 * that is not an object) goes through the SDK's check, with its error. `test/mcp/toolResultWire.test.ts` holds
 * both to the SDK's answer, byte for byte.
 */
export function toCheckedToolResult(outcome: ToolOutcome): CallToolResult {
  if (isCommonSuccess(outcome)) {
    const json = JSON.stringify(outcome.data);
    return {
      _meta: metaOf(outcome),
      content: [{ type: 'text' as const, text: textOf(outcome.data, json, outcome) }],
      structuredContent: outcome.data,
    };
  }
  const checked = specTypeSchemas.CallToolResult['~standard'].validate(toToolResult(outcome));
  if (checked.issues)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid tools/call result: ${checked.issues.map((i) => i.message).join('; ')}`,
    );
  return checked.value as CallToolResult;
}

/** A success whose result `toCheckedToolResult` builds itself: an object output, no content blocks of its own. */
const isCommonSuccess = (outcome: ToolOutcome): outcome is ToolOutcome & { ok: true; data: Record<string, unknown> } =>
  outcome.ok && !outcome.out.toolContent && isObject(outcome.data);

const metaOf = (outcome: ToolOutcome): Record<string, unknown> => {
  const _meta: Record<string, unknown> = { [REQUEST_ID_META]: outcome.requestId };
  if (outcome.out.replayed) _meta[REPLAYED_META] = true;
  return _meta;
};

/**
 * `JSON.stringify(toCheckedToolResult(outcome))` with more members, for the common success only (null for any other
 * outcome): the text written in one pass, the output serialized once (its text block and `structuredContent` share
 * it). `metaTail` and `tail` are members already in JSON, each starting with a comma: written last in `_meta`, and
 * after `structuredContent`.
 */
export function commonToolResultJson(outcome: ToolOutcome, metaTail: string, tail: string): string | null {
  if (!isCommonSuccess(outcome)) return null;
  const json = JSON.stringify(outcome.data);
  const text = textOf(outcome.data, json, outcome);
  const meta = JSON.stringify(metaOf(outcome));
  return (
    `{"_meta":${meta.slice(0, -1)}${metaTail}},` +
    `"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${json}${tail}}`
  );
}
