import { describe, expect, it } from 'vitest';
import { call } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { obtainTokens, registerClient, startOAuthServer } from '../oauth/oauthHelpers.js';

// Token audience pinning: a token is good only on the surface its `resource` named.

describe('security: token audience', () => {
  it('token replay across surfaces: a token for /mcp used on /v1 gets 403 invalid_audience', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const mcpToken = await obtainTokens(env.t, env.w, app, {
      resource: `${env.t.baseUrl}/mcp`,
      scope: 'me:read mcp:tools',
    });
    const r = await call(env.t, 'GET', '/v1/me', { key: mcpToken.access_token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('invalid_audience');
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    // and it works where it belongs
    const ok = await postMcp(env.t, toolCall('get_me'), { token: mcpToken.access_token });
    expect(ok.status).toBe(200);
    expect(ok.body.result.isError).toBeFalsy();
  });

  it('token replay across surfaces: a token for /v1 used on /mcp gets 403 invalid_audience before any JSON-RPC is read', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const v1Token = await obtainTokens(env.t, env.w, app, {
      resource: `${env.t.baseUrl}/v1`,
      scope: 'me:read mcp:tools',
    });
    for (const body of [toolCall('get_me'), '{not json']) {
      const r = await postMcp(env.t, body, { token: v1Token.access_token });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('invalid_audience');
      expect(r.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    }
    expect((await call(env.t, 'GET', '/v1/me', { key: v1Token.access_token })).status).toBe(200);
  });

  it('refresh token used as an access token: 401 on both surfaces', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const tokens = await obtainTokens(env.t, env.w, app, { scope: 'me:read mcp:tools' });
    expect((await call(env.t, 'GET', '/v1/me', { key: tokens.refresh_token })).status).toBe(401);
    expect((await postMcp(env.t, toolCall('get_me'), { token: tokens.refresh_token })).status).toBe(401);
  });
});
