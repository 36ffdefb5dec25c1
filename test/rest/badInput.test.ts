import { describe, expect, it } from 'vitest';
import { call, createWorld, sharedTestServer } from '../helpers/harness.js';

describe('bad input answers 4xx in the envelope, never 500, and changes nothing', () => {
  it('wrong types, missing fields, unknown fields, malformed, oversized and non-JSON bodies', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const p = `/v1/rooms/${w.roomId}/tasks`;
    const cases: [string, string | undefined, Record<string, string>, number, string][] = [
      ['wrong type', JSON.stringify({ title: 42 }), {}, 400, 'validation_error'],
      ['missing field', JSON.stringify({}), {}, 400, 'validation_error'],
      ['unknown field', JSON.stringify({ title: 'x', admin: true }), {}, 400, 'validation_error'],
      ['null body', 'null', {}, 400, 'validation_error'],
      ['array body', '[]', {}, 400, 'validation_error'],
      ['malformed JSON', '{"title":', {}, 400, 'validation_error'],
      ['bad date', JSON.stringify({ title: 'x', dueDate: '2026-13-45' }), {}, 400, 'validation_error'],
      ['bad status', JSON.stringify({ title: 'x', status: 'nope' }), {}, 400, 'validation_error'],
      ['huge string', JSON.stringify({ title: 'x'.repeat(600) }), {}, 400, 'validation_error'],
      [
        'oversized body',
        JSON.stringify({ title: 'x', description: 'y'.repeat(1024 * 1024 + 10) }),
        {},
        413,
        'payload_too_large',
      ],
      ['text/plain', 'title=x', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      ['prototype pollution', '{"title":"x","__proto__":{"admin":true}}', {}, 400, 'validation_error'],
      [
        'deep JSON',
        '{"title":"x","description":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
        {},
        400,
        'validation_error',
      ],
      ['null byte', JSON.stringify({ title: 'a\u0000b' }), {}, 400, 'validation_error'],
    ];
    for (const [name, body, headers, status, code] of cases) {
      const r = await call(t, 'POST', p, {
        key: w.key,
        body,
        headers: { 'content-type': 'application/json', ...headers },
      });
      expect(r.status, name).toBe(status);
      expect(r.body.error.code, name).toBe(code);
      expect(r.body.error.requestId, name).toBe(r.headers.get('x-request-id'));
      expect(JSON.stringify(r.body), name).not.toMatch(/at .*\.ts:\d+|SQLITE|QueryFailed/);
    }
    expect((await call(t, 'GET', p, { key: w.key })).body.data).toEqual([]);
  });

  it('bad path identifiers and unknown routes', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const r1 = await call(t, 'GET', '/v1/rooms/not-an-id', { key: w.key });
    expect(r1.status).toBe(400);
    expect(r1.body.error.code).toBe('validation_error');
    const r2 = await call(t, 'GET', `/v1/rooms/room_01KAR3V6X5Q2Z8N4M7P9W1T3YB`, { key: w.key });
    expect(r2.status).toBe(404);
    expect(r2.body.error.code).toBe('not_found');
    const r3 = await call(t, 'GET', '/v1/nothing-here', { key: w.key });
    expect(r3.status).toBe(404);
    expect(r3.body.error.code).toBe('not_found');
    const r4 = await call(t, 'DELETE', '/v1/rooms', { key: w.key });
    expect(r4.status).toBe(405);
    expect(r4.headers.get('allow')).toContain('GET');
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const ok = await call(t, 'GET', '/v1/me', { key: w.key, headers: { 'x-request-id': 'client-req-42' } });
    expect(ok.headers.get('x-request-id')).toBe('client-req-42');
    const err = await call(t, 'GET', '/v1/rooms/room_01KAR3V6X5Q2Z8N4M7P9W1T3YB', {
      key: w.key,
      headers: { 'x-request-id': 'client-req-43' },
    });
    expect(err.body.error.requestId).toBe('client-req-43');
    const bad = await call(t, 'GET', '/v1/me', { key: w.key, headers: { 'x-request-id': 'has spaces and <script>' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
