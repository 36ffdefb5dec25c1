import { describe, expect, it } from 'vitest';
import { Membership } from '../../db/entities/index.js';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { Browser, startOAuthServer } from '../oauth/oauthHelpers.js';

// Stolen, revoked and guessed credentials (a revoked one gets 401 from the next request on).

describe('security: credentials', () => {
  it('revoked key reuse: a key that has just worked gets 401 at once on /v1 and /mcp', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    const s = t.rt.services;
    await s.ds.transaction((m) => revokeApiKey(m, s.now(), w.keyId));
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(401);
    expect((await postMcp(t, toolCall('get_me'), { token: w.key })).status).toBe(401);
  });

  it("a departed member's key: once the user leaves the organization its key gets 401", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const member = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ['me:read'] });
    expect((await call(t, 'GET', '/v1/me', { key: member.token })).status).toBe(200);
    await t.rt.ds.getRepository(Membership).delete({ userId: w.member.id, organizationId: w.orgId });
    expect((await call(t, 'GET', '/v1/me', { key: member.token })).status).toBe(401);
  });

  it('credential in the URL: an API key in the query string is not accepted', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const q of [`api_key=${w.key}`, `access_token=${w.key}`, `key=${w.key}`]) {
      expect((await call(t, 'GET', `/v1/me?${q}`)).status).toBe(401);
    }
  });

  it('key guessing: unauthenticated attempts are counted per client address and stopped with 429', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '5' } });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await call(t, 'GET', '/v1/me', { key: `svc_live_guess${i}${'A'.repeat(34)}` })).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    const last = await call(t, 'GET', '/v1/me', { key: 'svc_live_guess' });
    expect(last.headers.get('svc-ratelimit-scope')).toBe('ip');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('password guessing: failed sign-ins are throttled per email and address with 429 and Retry-After', async () => {
    await using env = await startOAuthServer();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 6; i++) {
      const res = await new Browser(env.t.baseUrl).signIn(env.w.owner.email, `guess-${i}`);
      statuses.push(res.status);
      retryAfter = res.headers.get('retry-after');
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // the right password does not get through while throttled either
    expect((await new Browser(env.t.baseUrl).signIn(env.w.owner.email, env.w.owner.password)).status).toBe(429);
  });
});
