import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

// The REST adapter dispatches by method and first path segment (rest/restRouter.ts) instead of one
// Express route per operation; paths must still match as Express routes do.

describe('REST routing', () => {
  it('matches paths like Express: case-insensitive, optional trailing slash, decoded parameters; HEAD as GET', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).body.id).toBe(w.owner.id);
    expect((await call(t, 'GET', '/v1/me/', { key: w.key })).status).toBe(200);
    expect((await call(t, 'GET', '/V1/ME', { key: w.key })).status).toBe(200);
    const room = await call(t, 'GET', `/v1/rooms/${encodeURIComponent(w.roomId)}`, { key: w.key });
    expect(room.body.id).toBe(w.roomId);
    const head = await t.fetch('/v1/me', { method: 'HEAD', headers: { authorization: `Bearer ${w.key}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers an unknown path 404, a known path with another method 405 with Allow, a malformed escape 400', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const missing = await call(t, 'GET', '/v1/nothing-here', { key: w.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const wrongMethod = await call(t, 'DELETE', '/v1/me', { key: w.key });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    const malformed = await call(t, 'GET', '/v1/rooms/%E0%A4%A', { key: w.key });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('validation_error');
  });

  it('sends the API security headers on /v1 and the page headers elsewhere', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const api = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(api.headers.get('x-content-type-options')).toBe('nosniff');
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(api.headers.get('cache-control')).toBe('no-store');
    expect(api.headers.get('etag')).toBeNull();
    const doc = await t.fetch('/v1/openapi.json');
    const etag = doc.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    // (fetch adds `Cache-Control: no-cache` to a conditional request unless one is given)
    const again = await t.fetch('/v1/openapi.json', { headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' } });
    expect(again.status).toBe(304);
    const page = await t.fetch('/login');
    expect(page.headers.get('x-dns-prefetch-control')).toBe('off');
  });
});
