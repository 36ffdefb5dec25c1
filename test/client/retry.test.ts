import { describe, expect, it } from 'vitest';
import { createSvcClient, retryAfterSeconds, SvcApiError } from '../../clients/typescript/src/index.js';

// The client's retry and idempotency rules with a scripted fetch and an injected sleep (no clock, no server).

const envelope = (code: string) => JSON.stringify({ error: { code, message: code, requestId: 'req_1', details: {} } });
const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } });

function scripted(replies: Response[]) {
  const requests: { method: string; key: string | null; auth: string | null; body: string }[] = [];
  const fetch = async (r: Request) => {
    requests.push({
      method: r.method,
      key: r.headers.get('idempotency-key'),
      auth: r.headers.get('authorization'),
      body: await r.text(),
    });
    return replies.shift()!;
  };
  return { fetch, requests };
}

describe('client retries', () => {
  it('retries a 503 after its Retry-After with the same Idempotency-Key and body, then returns the success', async () => {
    const { fetch, requests } = scripted([
      answer(503, envelope('service_unavailable'), { 'retry-after': '2' }),
      answer(201, JSON.stringify({ id: 'msg_1', body: 'hi' })),
    ]);
    const waits: number[] = [];
    const svc = createSvcClient({
      baseUrl: 'http://svc.test',
      accessToken: async () => 'svc_at_token',
      fetch,
      retry: { sleep: async (ms) => void waits.push(ms) },
    });
    const data = await svc.unwrap(
      svc.api.POST('/v1/rooms/{roomId}/messages', { params: { path: { roomId: 'room_1' } }, body: { body: 'hi' } }),
    );
    expect(data).toEqual({ id: 'msg_1', body: 'hi' });
    expect(waits).toEqual([2000]);
    expect(requests).toHaveLength(2);
    expect(requests[0].key).toBeTruthy();
    expect(requests[1]).toEqual(requests[0]);
    expect(requests[0].auth).toBe('Bearer svc_at_token');
  });

  it('does not wait for a 429 without Retry-After (units exhausted) nor past maxDelaySeconds', async () => {
    const { fetch, requests } = scripted([
      answer(429, envelope('api_units_exhausted')),
      answer(429, envelope('rate_limited'), { 'retry-after': '3600' }),
    ]);
    const svc = createSvcClient({
      baseUrl: 'http://svc.test',
      apiKey: 'svc_test_x',
      fetch,
      retry: { sleep: async () => expect.unreachable() },
    });
    await expect(svc.unwrap(svc.api.GET('/v1/me'))).rejects.toMatchObject({
      status: 429,
      code: 'api_units_exhausted',
      requestId: 'req_1',
    });
    await expect(svc.unwrap(svc.api.GET('/v1/me'))).rejects.toBeInstanceOf(SvcApiError);
    expect(requests).toHaveLength(2);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.UTC(2026, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2026, 0, 1))).toBe(30);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
  });
});
