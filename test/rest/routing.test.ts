import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, createWorld, sharedTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';

/** One raw HTTP/1.1 exchange (for request lines fetch cannot send), answered with Connection: close. */
function rawRequest(
  baseUrl: string,
  head: string,
  body = '',
): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  const length = body ? `\r\nContent-Length: ${Buffer.byteLength(body)}` : '';
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`${head}\r\nHost: ${hostname}:${port}${length}\r\nConnection: close\r\n\r\n${body}`),
    );
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headers, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(headers.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

// The REST adapter dispatches by method and first path segment (rest/restRouter.ts) instead of one
// Express route per operation; paths must still match as Express routes do.

describe('REST routing', () => {
  it('matches paths like Express: case-insensitive, optional trailing slash, decoded parameters; HEAD as GET', async () => {
    await using t = await sharedTestServer();
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
    await using t = await sharedTestServer();
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
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const security = {
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
    };
    const api = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(api.headers.get('cache-control')).toBe('no-store');
    expect(api.headers.get('etag')).toBeNull();
    expect(api.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(api.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(api.body)));
    expect(api.headers.get('x-request-id')).toMatch(/^req_/);
    expect(api.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(api.headers.get('svc-api-units-remaining')).toMatch(/^\d+$/);
    const refused = await call(t, 'GET', '/v1/me', { key: 'svc_test_nope' });
    const missing = await call(t, 'GET', '/v1/nothing', { key: w.key });
    const mcp = await t.fetch('/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const mcpCall = await t.fetch('/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${w.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }),
    });
    expect(mcpCall.status).toBe(200);
    expect(mcpCall.headers.get('x-request-id')).toMatch(/^req_/);
    expect(mcpCall.headers.get('svc-api-units-cost')).toBe('1');
    for (const [what, res] of Object.entries({ success: api, refused, missing, mcp, mcpCall })) {
      for (const [name, value] of Object.entries(security))
        expect(res.headers.get(name), `${what}: ${name}`).toBe(value);
      // never both the API set and helmet's page set
      expect(res.headers.get('x-dns-prefetch-control'), what).toBeNull();
    }
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(missing.status).toBe(404);
    expect(mcp.status).toBe(401);
    expect((await t.fetch('/V1/OpenAPI.json/')).status).toBe(200);
    expect((await t.fetch('/v1/openapi.json', { method: 'POST' })).status).toBe(404);
    const doc = await t.fetch('/v1/openapi.json');
    for (const [name, value] of Object.entries(security))
      expect(doc.headers.get(name), `openapi.json: ${name}`).toBe(value);
    const etag = doc.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    // (fetch adds `Cache-Control: no-cache` to a conditional request unless one is given)
    const again = await t.fetch('/v1/openapi.json', {
      headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' },
    });
    expect(again.status).toBe(304);
    const page = await t.fetch('/login');
    expect(page.headers.get('x-dns-prefetch-control')).toBe('off');
  });

  it('answers the API alike for a request line in origin form and in absolute form (as a proxy may send)', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const auth = `Authorization: Bearer ${w.key}`;
    const lane = await rawRequest(t.baseUrl, `GET /v1/me HTTP/1.1\r\n${auth}`);
    const viaApp = await rawRequest(t.baseUrl, `GET ${t.baseUrl}/v1/me HTTP/1.1\r\n${auth}`);
    for (const r of [lane, viaApp]) {
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ id: w.owner.id, organizationId: w.orgId });
      expect(r.headers).toMatch(/^x-content-type-options: nosniff$/im);
      expect(r.headers).toMatch(/^svc-api-units-cost: 1$/im);
      expect(r.headers).not.toMatch(/^x-dns-prefetch-control:/im);
    }
    const missingViaApp = await rawRequest(t.baseUrl, `GET ${t.baseUrl}/v1/nothing-here HTTP/1.1\r\n${auth}`);
    expect(missingViaApp.status).toBe(404);
    expect(JSON.parse(missingViaApp.body).error.code).toBe('not_found');
    // a malformed escape is passed on as an error by the REST surface: the app's last resort answers it
    const malformed = await rawRequest(t.baseUrl, `GET /v1/rooms/%E0%A4%A HTTP/1.1\r\n${auth}`);
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body).error.code).toBe('validation_error');
    // /mcp in any case and with a trailing slash is the endpoint; a path below it is not
    for (const path of ['/mcp', '/MCP', '/mcp/']) {
      const r = await t.fetch(path, {
        method: 'POST',
        body: JSON.stringify(toolCall('get_me')),
        headers: {
          authorization: `Bearer ${w.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      });
      expect(r.status, path).toBe(200);
      expect(((await r.json()) as { result: { structuredContent: { id: string } } }).result.structuredContent.id).toBe(
        w.owner.id,
      );
    }
    const below = await t.fetch('/mcp/x', { method: 'POST', headers: { authorization: `Bearer ${w.key}` } });
    expect(below.status).toBe(404);
    expect((await postMcp(t, toolCall('get_me'), { token: w.key })).status).toBe(200);
    // pages and health still go through the app
    expect((await t.fetch('/healthz')).status).toBe(200);
    expect((await t.fetch('/login')).headers.get('x-dns-prefetch-control')).toBe('off');
  });

  it('answers an operation the same from the direct route and through the app: status, header lines, body', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    // origin form takes the REST router's direct route; absolute form is not of the plain form and goes
    // through Express; each pair's answers must agree but for what changes from one request to the next
    const head = (method: string, target: string, extra = '') =>
      `${method} ${target} HTTP/1.1\r\nAuthorization: Bearer ${w.key}\r\nX-Request-Id: same-id${extra}`;
    const json = '\r\nContent-Type: application/json';
    const cases: [string, string, string, string][] = [
      ['GET', '/v1/me', '', ''],
      ['GET', '/v1/me/', '', ''],
      ['GET', `/v1/rooms/${w.roomId}/messages?limit=2`, '', ''],
      ['GET', `/v1/rooms/${w.roomId}/messages?limit=1e2&limit=3`, '', ''],
      ['GET', `/v1/rooms/${w.roomId}/messages?bogus=1`, '', ''],
      ['GET', '/v1/rooms/room_unknown', '', ''],
      ['POST', `/v1/rooms/${w.roomId}/messages`, json, JSON.stringify({ text: 'hello' })],
      ['POST', `/v1/rooms/${w.roomId}/messages`, json, '{"text":'],
      ['POST', `/v1/rooms/${w.roomId}/messages`, '\r\nContent-Type: text/plain', 'hello'],
    ];
    const varying = /^(date|ratelimit-remaining|svc-api-units-remaining|svc-api-units-used|location): .*$/gim;
    const shape = (r: { status: number; headers: string; body: string }) => ({
      status: r.status,
      headers: r.headers.replace(varying, '$1: *'),
      body: r.body.replace(/"(msg|evt)_[0-9A-Za-z]+"/g, '"$1_*"').replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"*"'),
    });
    for (const [method, target, extra, body] of cases) {
      const direct = await rawRequest(t.baseUrl, head(method, target, extra), body);
      const viaApp = await rawRequest(t.baseUrl, head(method, `${t.baseUrl}${target}`, extra), body);
      expect(shape(viaApp), `${method} ${target}`).toEqual(shape(direct));
      expect(direct.headers, `${method} ${target}`).toMatch(/^x-request-id: same-id$/im);
    }
  });

  it('answers MCP the same from the listener and through the app: status, header lines, body', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    // origin form takes the MCP router's direct route (no Express); absolute form goes through Express to the same
    // door, whose refusals write their answers themselves: each pair must agree but for what changes per request
    const accept = '\r\nAccept: application/json, text/event-stream';
    const json = `\r\nContent-Type: application/json${accept}`;
    const head = (method: string, target: string, extra: string, key: string | null = w.key) =>
      `${method} ${target} HTTP/1.1\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}X-Request-Id: same-id${extra}`;
    const getMe = JSON.stringify(toolCall('get_me'));
    const cases: [string, string, string, string, (string | null)?][] = [
      ['POST', '/mcp', json, getMe],
      ['POST', '/mcp?toolsets=messages', json, JSON.stringify(toolCall('list_rooms'))],
      ['POST', '/mcp?toolsets=no-such-set', json, getMe],
      ['POST', '/mcp', json, getMe, null],
      ['POST', '/mcp', json, getMe, 'svc_not_a_key'],
      ['POST', '/mcp', json, '{"jsonrpc":'],
      ['POST', '/mcp', json, JSON.stringify([toolCall('get_me')])],
      ['POST', '/mcp', `\r\nContent-Type: text/plain${accept}`, getMe],
      ['GET', '/mcp', accept, ''],
      ['DELETE', '/mcp', accept, ''],
      ['POST', '/mcp/below', json, getMe],
    ];
    const varying = /^(date|ratelimit-remaining|svc-api-units-remaining|svc-api-units-used): .*$/gim;
    const shape = (r: { status: number; headers: string; body: string }) => ({
      status: r.status,
      headers: r.headers.replace(varying, '$1: *'),
      body: r.body,
    });
    for (const [method, target, extra, body, key] of cases) {
      const direct = await rawRequest(t.baseUrl, head(method, target, extra, key), body);
      const viaApp = await rawRequest(t.baseUrl, head(method, `${t.baseUrl}${target}`, extra, key), body);
      expect(shape(viaApp), `${method} ${target} ${body}`).toEqual(shape(direct));
      expect(direct.status, `${method} ${target} ${body}`).toBeGreaterThanOrEqual(200);
    }
  });
});
