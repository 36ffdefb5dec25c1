import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { post2026, postMcp, toolCall } from './mcpClient.js';

/** An answer with its request ids made equal (each call has its own). */
const withoutIds = (b: unknown) => JSON.parse(JSON.stringify(b).replaceAll(/req_[0-9A-Z]+/g, 'req'));
const b64 = (s: string) => `=?base64?${Buffer.from(s).toString('base64')}?=`;

// The router answers a plain tools/call itself (mcp/tools/plainToolCall.ts); the same call sent so that it misses that
// path (a base64 Mcp-Name on 2026-07-28, a batch of one on 2025-03-26) is answered by the SDK's server: the two
// answers must be the same, headers included.
describe('a plain tools/call answered by the router is what the SDK server answers', () => {
  it('on 2026-07-28 and on 2025', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    // a write compared as its replays (each path's first call would create a message of its own)
    const write = { roomId: w.roomId, body: 'Hello "agent" \\ ✓\n', idempotencyKey: 'k-1' };
    expect(
      (await post2026(t, 'tools/call', { name: 'create_message', arguments: write }, { token: w.key })).status,
    ).toBe(200);
    const calls: [string, Record<string, unknown>][] = [
      ['get_me', {}],
      ['create_message', write],
      ['list_messages', { roomId: w.roomId }],
      ['list_messages', { roomId: 'room_nope' }],
      ['list_messages', { roomId: w.roomId, limit: 'many' }],
    ];
    for (const [name, args] of calls) {
      const fast = await post2026(t, 'tools/call', { name, arguments: args }, { token: w.key, id: 7 });
      const viaSdk = await post2026(
        t,
        'tools/call',
        { name, arguments: args },
        { token: w.key, id: 7, headers: { 'mcp-name': b64(name) } },
      );
      const fast25 = await postMcp(t, toolCall(name, args, 8), {
        token: w.key,
        headers: { 'mcp-protocol-version': '2025-03-26' },
      });
      const viaSdk25 = await postMcp(t, [toolCall(name, args, 8)], {
        token: w.key,
        headers: { 'mcp-protocol-version': '2025-03-26' },
      });
      for (const r of [fast, viaSdk, fast25, viaSdk25]) {
        expect(r.status, name).toBe(200);
        expect(r.headers.get('content-type')).toBe('application/json');
        expect(r.headers.get('x-content-type-options')).toBe('nosniff');
        expect(r.headers.get('svc-api-units-cost')).toMatch(/^\d+$/);
        expect(r.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
      }
      expect(withoutIds(fast.body), name).toEqual(withoutIds(viaSdk.body));
      expect(JSON.stringify(withoutIds(fast.body))).toBe(JSON.stringify(withoutIds(viaSdk.body)));
      // (the SDK answers a batch of one with the one answer)
      expect(JSON.stringify(withoutIds(fast25.body)), name).toBe(JSON.stringify(withoutIds(viaSdk25.body)));
      expect(fast.body.result.resultType).toBe('complete');
      expect(fast25.body.result.resultType).toBeUndefined();
    }
    // one audit row per call, whichever path answered it
    const rows = (await listAudit(t.rt.services, { limit: 100 })).filter(
      (r) => r.surface === 'mcp' && r.routePattern === 'get_me',
    );
    expect(rows).toHaveLength(4);
  });
});
