import { InMemoryTransport, Server, SERVER_INFO_META_KEY, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { newResponseState } from '../../src/procedures/index.js';
import type { ToolOutcome } from '../../mcp/tools/invokeTool.js';
import { toolCallAnswerJson } from '../../mcp/tools/plainToolCall.js';
import { SERVER_INFO } from '../../mcp/server/createMcpServer.js';
import { toCheckedToolResult, toToolResult } from '../../mcp/tools/toolResult.js';
import { createWorld, sharedTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from './mcpClient.js';

/**
 * What the SDK's own `Server` (a 2025 exchange) sends for a handler returning `result` (it checks the result of every
 * `tools/call`).
 */
async function sdkAnswer(result: unknown): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/call', async () => result as never);
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const answer = new Promise<JSONRPCMessage>((resolve) => (client.onmessage = resolve));
  await client.start();
  await client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
  return (await answer) as never;
}

const ok = (data: unknown, o: { replayed?: boolean; toolContent?: unknown[] } = {}): ToolOutcome => {
  const out = newResponseState();
  if (o.replayed) out.replayed = { headers: {} };
  if (o.toolContent) out.toolContent = o.toolContent as never;
  return { ok: true, data, requestId: 'req_01TEST', out };
};

/** Outputs of the shapes the procedures return, with the characters JSON escapes. */
function generatedOutputs(): unknown[] {
  const texts = [
    'plain',
    'quote " and backslash \\',
    'line\nbreak\ttab',
    'ünïcödé ✓ 😀',
    '\u0000\u001f\u2028\u2029',
    '</script>',
  ];
  const item = (i: number) => ({
    id: `msg_${String(i).padStart(26, '0')}`,
    roomId: 'room_1',
    body: texts[i % texts.length],
    createdAt: '2026-11-23T00:00:00.000Z',
    editedAt: i % 2 ? null : '2026-11-23T00:00:01.000Z',
    mentions: i % 3 ? [] : ['usr_1', 'usr_2'],
    meta: { n: i, f: i / 3, ok: i % 2 === 0 },
  });
  return [
    {},
    { id: 'usr_1', email: 'a@example.com', name: null },
    { data: [], nextCursor: null },
    { data: Array.from({ length: 50 }, (_, i) => item(i)), nextCursor: 'c_abc' },
    { nested: { deep: { deeper: [1, 2.5, -0, 1e21, true, null, 'x'] } }, '10': 'integer-like key', a: undefined },
  ];
}

describe('tool results built once (mcp/tools/toolResult.ts toCheckedToolResult)', () => {
  it('is, byte for byte, what the SDK Server sends after checking the result itself', async () => {
    const outcomes: ToolOutcome[] = [];
    for (const data of generatedOutputs()) outcomes.push(ok(data), ok(data, { replayed: true }));
    outcomes.push(
      ok(null),
      ok(undefined),
      ok([1, 2]),
      ok('text'),
      ok(
        { id: 'file_1' },
        {
          toolContent: [
            { type: 'text', text: 'a file' },
            { type: 'resource_link', uri: 'svc://files/file_1', name: 'f' },
          ],
        },
      ),
      { ok: false, error: new DomainError('not_found', 'No such room'), requestId: 'req_02', out: newResponseState() },
      {
        ok: false,
        error: new DomainError('validation_error', 'Bad input', {
          details: { issues: [{ path: ['a'], message: 'x' }] },
        }),
        requestId: 'req_03',
        out: newResponseState(),
      },
    );
    for (const outcome of outcomes) {
      const sdk = await sdkAnswer(toToolResult(outcome));
      expect(sdk.error).toBeUndefined();
      const ours = toCheckedToolResult(outcome);
      expect(JSON.stringify(ours)).toBe(JSON.stringify(sdk.result));
      // the plain call's answer, written in one pass for a common success: the same bytes on both revisions
      const result = sdk.result as { _meta: Record<string, unknown> };
      const modern = {
        ...result,
        _meta: { ...result._meta, [SERVER_INFO_META_KEY]: SERVER_INFO },
        resultType: 'complete',
      };
      for (const id of [1, 'a "quoted" id', 0]) {
        expect(toolCallAnswerJson(id, outcome, 'legacy')).toBe(JSON.stringify({ result, jsonrpc: '2.0', id }));
        expect(toolCallAnswerJson(id, outcome, '2026-07-28')).toBe(
          JSON.stringify({ result: modern, jsonrpc: '2.0', id }),
        );
      }
    }
  });

  it('refuses a malformed result as the SDK does', async () => {
    const outcome = ok({ id: 'x' }, { toolContent: [{ type: 'no-such-block' }] });
    const sdk = await sdkAnswer(toToolResult(outcome));
    expect(sdk.error?.code).toBe(-32602);
    // (the v2 SDK words the schema's issues as zod does; the refusal and its prefix are the same)
    expect(sdk.error!.message).toMatch(/^Invalid tools\/call result: /);
    expect(() => toCheckedToolResult(outcome)).toThrow(/^Invalid tools\/call result: /);
    expect(() => toolCallAnswerJson(1, outcome, 'legacy')).toThrow(/^Invalid tools\/call result: /);
  });

  it('answers tools/call over HTTP with the bytes of the SDK-checked result', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const calls = [
      toolCall('create_message', { roomId: w.roomId, body: 'Hello "agent" \\ ✓\n', idempotencyKey: 'k-1' }, 1),
      toolCall('create_message', { roomId: w.roomId, body: 'Hello "agent" \\ ✓\n', idempotencyKey: 'k-1' }, 2),
      toolCall('list_messages', { roomId: w.roomId }, 3),
      toolCall('get_me', {}, 4),
      toolCall('list_messages', { roomId: 'room_nope' }, 5),
    ];
    for (const call of calls) {
      const r = await postMcp(t, call, { token: w.key });
      expect(r.status).toBe(200);
      const body = JSON.parse(r.text);
      body.result = CallToolResultSchema.parse(body.result);
      expect(r.text).toBe(JSON.stringify(body));
    }
    const list = await postMcp(t, toolCall('list_messages', { roomId: w.roomId }, 6), { token: w.key });
    expect(list.body.result.structuredContent.data).toHaveLength(1);
    // the text block is the compact form a model reads (toolText.ts), the structuredContent the output itself
    expect(list.body.result.content[0].text).toMatch(
      /^1 item; last page;[^\n]*\n.*\nauthor\|postedBy\|body\|createdAt on /,
    );
    expect(list.body.result.content[0].text).toContain(JSON.stringify('Hello "agent" \\ ✓\n'));
  });
});
