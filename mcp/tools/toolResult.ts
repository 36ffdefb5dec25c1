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

/** The JSON text of the `structuredContent` of a result built by `toCheckedToolResult` (the text block's own). */
const structuredJson = new WeakMap<object, string>();

/**
 * The tool result exactly as the SDK's `Server` would send it after its own check of a `tools/call`
 * result (the spec's `CallToolResult` schema, `specTypeSchemas` of @modelcontextprotocol/server),
 * made once instead of twice. The common success (an object output, no content blocks of its own) is
 * built directly in the shape that check returns (`_meta`, `content`, `structuredContent`: the schema's
 * key order, what the wire has always carried), and the JSON text of the output is kept for
 * `toolAnswerJson`, which writes it as `structuredContent` instead of serializing the output a second time.
 * Anything else (an error, a procedure's own blocks, an output that is not an object) goes through the
 * SDK's check as before, with its error. `test/mcp/toolResultWire.test.ts` holds both to the SDK's answer,
 * byte for byte.
 */
export function toCheckedToolResult(outcome: ToolOutcome): CallToolResult {
  if (outcome.ok && !outcome.out.toolContent && isObject(outcome.data)) {
    const _meta: Record<string, unknown> = { [REQUEST_ID_META]: outcome.requestId };
    if (outcome.out.replayed) _meta[REPLAYED_META] = true;
    const json = JSON.stringify(outcome.data);
    const result = {
      _meta,
      content: [{ type: 'text' as const, text: textOf(outcome.data, json, outcome) }],
      structuredContent: outcome.data,
    };
    structuredJson.set(result, json);
    return result;
  }
  const checked = specTypeSchemas.CallToolResult['~standard'].validate(toToolResult(outcome));
  if (checked.issues)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid tools/call result: ${checked.issues.map((i) => i.message).join('; ')}`,
    );
  return checked.value as CallToolResult;
}

const sameKeys = (o: object, keys: readonly string[]): boolean => {
  const own = Object.keys(o);
  return own.length === keys.length && own.every((k, i) => k === keys[i]);
};

/**
 * `JSON.stringify(answer)` for a JSON-RPC answer (`{ result, jsonrpc, id }`, as the SDK's protocol layer
 * sends it) whose result `toCheckedToolResult` built: the same text, with the output's JSON written once
 * more from the text block's string instead of serialized again. Any other answer, or one whose shape
 * is not exactly that, is simply `JSON.stringify`'d.
 */
export function toolAnswerJson(answer: unknown): string {
  const a = answer as {
    result?: { _meta: unknown; content: unknown; structuredContent: unknown; resultType?: unknown };
    id?: unknown;
  };
  const json = a && typeof a === 'object' && a.result ? structuredJson.get(a.result) : undefined;
  // (a 2026-07-28 answer ends its result with `resultType`)
  const modern = json !== undefined && a.result!.resultType === 'complete';
  if (
    json === undefined ||
    (a as { jsonrpc?: unknown }).jsonrpc !== '2.0' ||
    !sameKeys(a, ['result', 'jsonrpc', 'id']) ||
    !sameKeys(
      a.result!,
      modern ? ['_meta', 'content', 'structuredContent', 'resultType'] : ['_meta', 'content', 'structuredContent'],
    )
  ) {
    return JSON.stringify(answer);
  }
  const r = a.result!;
  return (
    `{"result":{"_meta":${JSON.stringify(r._meta)},"content":${JSON.stringify(r.content)},"structuredContent":${json}${modern ? ',"resultType":"complete"' : ''}},` +
    `"jsonrpc":"2.0","id":${JSON.stringify(a.id)}}`
  );
}
