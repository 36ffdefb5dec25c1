import { describe, expect, it } from 'vitest';
import { listAudit, purgeAudit } from '../../src/auth/audit.js';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';

describe('audit log', () => {
  it('writes one row per /v1 request, failures included, with the route template and no secret', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '100', SVC_MONTHLY_UNITS: '1000' } });
    const w = await createWorld(t.rt);
    const narrow = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    const requests: [string, string, string | undefined, unknown, number][] = [
      ['GET', '/v1/me', w.key, undefined, 200],
      ['GET', '/v1/me', undefined, undefined, 401],
      ['GET', `/v1/rooms/${w.roomId}`, narrow.token, undefined, 403],
      ['GET', `/v1/rooms/${w.dmRoomId}`, w.key, undefined, 404],
      ['POST', `/v1/rooms/${w.roomId}/messages`, w.key, { nope: 1 }, 400],
      ['POST', `/v1/rooms/${w.roomId}/messages`, w.key, { body: 'hi' }, 201],
      ['GET', '/v1/unknown', w.key, undefined, 404],
    ];
    const ids: string[] = [];
    for (const [m, p, key, body, status] of requests) {
      const r = await call(t, m, p, { key, body });
      expect(r.status, `${m} ${p}`).toBe(status);
      ids.push(r.headers.get('x-request-id')!);
    }
    const rows = await listAudit(t.rt.services, { limit: 100 });
    expect(rows).toHaveLength(requests.length);
    const byId = new Map(rows.map((r) => [r.requestId, r]));
    const ok = byId.get(ids[0])!;
    expect(ok).toMatchObject({
      surface: 'rest',
      method: 'GET',
      routePattern: '/v1/me',
      statusCode: 200,
      authMethod: 'api_key',
      actor: 'app',
      organizationId: w.orgId,
      userId: w.owner.id,
      apiKeyId: w.keyId,
      tokenId: null,
      units: 1,
      delegatingUserId: null,
    });
    expect(byId.get(ids[1])).toMatchObject({ statusCode: 401, actor: null, authMethod: null, units: 0 });
    expect(byId.get(ids[2])).toMatchObject({
      statusCode: 403,
      routePattern: '/v1/rooms/{roomId}',
      scopes: ['me:read'],
      units: 0,
    });
    expect(byId.get(ids[3])).toMatchObject({ statusCode: 404, routePattern: '/v1/rooms/{roomId}' });
    expect(byId.get(ids[4])).toMatchObject({ statusCode: 400, routePattern: '/v1/rooms/{roomId}/messages' });
    expect(byId.get(ids[5])).toMatchObject({ statusCode: 201, units: 2 });
    expect(byId.get(ids[6])).toMatchObject({ statusCode: 404, routePattern: '(unmatched)' });
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(w.key);
    expect(dump).not.toContain(narrow.token);
    expect(dump).not.toContain('svc_test_');
  });

  it('purges rows older than seven years, and only those', async () => {
    let now = new Date('2019-01-01T00:00:00.000Z');
    await using t = await startTestServer({ now: () => now });
    const w = await createWorld(t.rt);
    await call(t, 'GET', '/v1/me', { key: w.key });
    now = new Date('2026-01-02T00:00:00.000Z');
    await call(t, 'GET', '/v1/me', { key: w.key });
    expect(await purgeAudit(t.rt.services)).toBe(1);
    const left = await listAudit(t.rt.services, {});
    expect(left).toHaveLength(1);
    expect(left[0].createdAt.startsWith('2026-01-02')).toBe(true);
  });
});
