import { describe, expect, it } from 'vitest';
import { call } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import {
  authorizeUrl,
  Browser,
  CALLBACK,
  field,
  pkcePair,
  postForm,
  registerClient,
  startOAuthServer,
} from '../oauth/oauthHelpers.js';

// PostgreSQL's text type refuses NUL, so a NUL in a client_id, an email or a grant id must never reach a
// query (it would answer 500): every surface refuses it cleanly, on both engines.

const NUL = 'cli_01\u0000x';

describe('a NUL character in any parameter', () => {
  it('gets RFC 6749 errors from /oauth/token and /oauth/revoke, and a 400 page from /oauth/authorize', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const app = await registerClient(t);
    const token = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: 'svc_rt_x',
      client_id: NUL,
    });
    expect(token.status).toBe(400);
    expect(token.body).toMatchObject({ error: 'invalid_request' });
    const code = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: 'a\u0000b',
      client_id: app.clientId,
      code_verifier: 'x',
      redirect_uri: CALLBACK,
    });
    expect(code.body.error).toBe('invalid_request');
    const revoke = await postForm(t, '/oauth/revoke', { token: 'svc_at_x', client_id: NUL });
    expect(revoke.body.error).toBe('invalid_request');
    const basic = await postForm(
      t,
      '/oauth/revoke',
      { token: 'svc_at_x' },
      { authorization: `Basic ${Buffer.from(`${NUL}:secret`).toString('base64')}` },
    );
    expect(basic.status).toBe(401);
    expect(basic.body.error).toBe('invalid_client');
    const authorize = await t.fetch(
      authorizeUrl({
        response_type: 'code',
        client_id: NUL,
        redirect_uri: CALLBACK,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        resource: `${t.baseUrl}/v1`,
      }),
    );
    expect(authorize.status).toBe(400);
    expect(authorize.headers.get('location')).toBeNull();
  });

  it('gets a 4xx page from the sign-in form and the grant revocation form', async () => {
    await using env = await startOAuthServer();
    const b = new Browser(env.t.baseUrl);
    const page = await (await b.get('/login')).text();
    const login = await b.post('/login', {
      csrf: field(page, 'csrf'),
      email: 'owner\u0000@example.test',
      password: 'whatever',
    });
    expect(login.status).toBeGreaterThanOrEqual(400);
    expect(login.status).toBeLessThan(500);
    await b.signIn(env.w.owner.email, env.w.owner.password);
    const apps = await (await b.get('/settings/apps')).text();
    const revoke = await b.post('/settings/apps/revoke', { csrf: field(apps, 'csrf'), grant: 'grt_\u0000' });
    expect(revoke.status).toBe(404);
  });

  it('gets 400 validation_error on /v1 and an isError result on /mcp', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const rest = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'a\u0000b' } });
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('validation_error');
    const mcp = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'a\u0000b' }), { token: w.key });
    expect(JSON.parse(mcp.body.result.content[0].text).error.code).toBe('validation_error');
  });
});
