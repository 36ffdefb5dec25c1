import { describe, expect, it } from 'vitest';
import { call, createWorld, sharedTestServer } from '../helpers/harness.js';

// Bytes that are not UTF-8 inside a JSON body must not be decoded with U+FFFD replacement characters and
// stored, which would silently change the client's text. RFC 8259 §8.1: JSON text
// exchanged between systems is UTF-8; anything else is refused, and nothing is written.

const NOT_UTF8 = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]];

describe('a JSON body that is not UTF-8', () => {
  it.each(NOT_UTF8)('is refused on /v1 with 400 validation_error and writes nothing (bytes %#)', async (...bad) => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const body = Buffer.concat([Buffer.from('{"body":"caf'), Buffer.from(bad), Buffer.from('"}')]);
    const res = await t.fetch(`/v1/rooms/${w.roomId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/json' },
      body,
    });
    const json: any = await res.json();
    expect(res.status).toBe(400);
    expect(json.error).toMatchObject({ code: 'validation_error', details: { reason: 'invalid_utf8' } });
    const list = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key });
    expect(list.body.data).toEqual([]);
  });

  it('is refused on /mcp with a JSON-RPC parse error and runs no tool', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const text = Buffer.concat([
      Buffer.from(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_message","arguments":{"roomId":"${w.roomId}","body":"caf`,
      ),
      Buffer.from([0xff]),
      Buffer.from('"}}}'),
    ]);
    const raw = await t.fetch('/mcp', {
      method: 'POST',
      body: text,
      headers: {
        authorization: `Bearer ${w.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as any).error).toMatchObject({ code: -32700 });
    const list = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key });
    expect(list.body.data).toEqual([]);
  });
});
