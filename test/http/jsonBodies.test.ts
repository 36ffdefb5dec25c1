import { describe, expect, it } from 'vitest';
import { createWorld, sharedTestServer } from '../helpers/harness.js';
import { toolCall } from '../mcp/mcpClient.js';

// Whatever the text of a JSON answer (ASCII, or not: two-byte, astral, separators), the bytes on the wire are its
// UTF-8 and Content-Length counts exactly them, on REST and on both MCP paths (the answer's parts are joined and
// counted by each surface's writer, which must not write them as ASCII).

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const BODIES = [
  'plain ascii',
  'quote " backslash \\ newline \n',
  'ünïcödé',
  '✓ 😀 𝄞',
  'line sep \u2028 para sep \u2029 end',
];

describe('JSON answers carry their text as UTF-8 with an exact Content-Length', () => {
  it('over REST and MCP, for ASCII and non-ASCII text alike', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const auth = { authorization: `Bearer ${w.key}` };
    for (const body of BODIES) {
      const r = await t.fetch(`/v1/rooms/${w.roomId}/messages`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ body }),
      });
      expect(r.status).toBe(201);
    }
    const check = async (r: Response) => {
      const bytes = new Uint8Array(await r.arrayBuffer());
      expect(r.status).toBe(200);
      expect(Number(r.headers.get('content-length'))).toBe(bytes.length);
      return JSON.parse(UTF8.decode(bytes)) as any;
    };
    const rest = await check(await t.fetch(`/v1/rooms/${w.roomId}/messages?limit=50`, { headers: auth }));
    const mcp = await check(
      await t.fetch('/mcp', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(toolCall('list_messages', { roomId: w.roomId, limit: 50 })),
      }),
    );
    for (const page of [rest, mcp.result.structuredContent]) {
      expect(page.data.map((m: { body: string }) => m.body).sort()).toEqual([...BODIES].sort());
    }
    // the text block is the compact table a model reads (mcp/tools/toolText.ts): one line a body, as it is or as a JSON
    // string
    const rows = (mcp.result.content[0].text as string)
      .split('\n')
      .slice(3)
      .map((line) => line.split('|')[0]);
    expect(rows.map((cell) => (cell.startsWith('"') ? JSON.parse(cell) : cell)).sort()).toEqual([...BODIES].sort());
    // an all-ASCII answer too
    const me = await check(await t.fetch('/v1/me', { headers: auth }));
    expect(me.id).toBe(w.owner.id);
  });
});
