import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import {
  authorizeUrl,
  Browser,
  CALLBACK,
  field,
  pkcePair,
  registerClient,
  startOAuthServer,
} from '../oauth/oauthHelpers.js';

// The browser session of the pages (the API surfaces never accept its cookie) and the attacks
// on browsers: CSRF, clickjacking, forged sessions, and DNS rebinding against /mcp.

describe('security: browser session and pages', () => {
  it('session riding on the API: the svc_session cookie (as cookie, Bearer or X-Api-Key) is refused on /v1 and /mcp', async () => {
    await using env = await startOAuthServer();
    const b = new Browser(env.t.baseUrl);
    await b.signIn(env.w.owner.email, env.w.owner.password);
    const session = b.cookies.get('svc_session')!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const attempts: Record<string, string>[] = [
      { cookie: `svc_session=${session}` },
      { authorization: `Bearer ${session}` },
      { 'x-api-key': session },
    ];
    for (const headers of attempts) {
      const rest = await call(env.t, 'GET', '/v1/me', { headers });
      expect(rest.status).toBe(401);
      expect(rest.body.error.code).toBe('unauthorized');
      const mcp = await postMcp(env.t, toolCall('get_me'), { headers });
      expect(mcp.status).toBe(401);
    }
  });

  it('forged session: a JWT with alg none, one signed with another key, or a made-up session token does not sign anyone in', async () => {
    await using env = await startOAuthServer();
    const claims = { sub: env.w.owner.id, sid: 'x', aud: `${env.t.baseUrl}/web` };
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ ...claims, exp: 9_999_999_999 })).toString('base64url')}.`;
    const otherKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-server-key-0123456789abcdef'));
    const madeUp = 'A'.repeat(43);
    for (const token of [none, otherKey, madeUp, env.w.owner.id]) {
      const res = await env.t.fetch('/settings/apps', { headers: { cookie: `svc_session=${token}` } });
      expect([302, 303]).toContain(res.status);
      expect(res.headers.get('location')).toMatch(/^\/login/);
    }
  });

  it('CSRF: sign-in, consent and revoke forms without the session-bound token, or from another origin, are refused', async () => {
    await using env = await startOAuthServer();
    const b = new Browser(env.t.baseUrl);
    const noToken = await b.post('/login', { email: env.w.owner.email, password: env.w.owner.password });
    expect(noToken.status).toBe(403);
    const page = await (await b.get('/login')).text();
    const crossOrigin = await b.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({
        csrf: field(page, 'csrf'),
        email: env.w.owner.email,
        password: env.w.owner.password,
      }).toString(),
    });
    expect(crossOrigin.status).toBe(403);
    expect(b.cookies.has('svc_session')).toBe(false);
    await b.signIn(env.w.owner.email, env.w.owner.password);
    expect((await b.post('/settings/apps/revoke', { grant: 'grt_x' })).status).toBe(403);
    const app = await registerClient(env.t);
    const a = await b.get(
      authorizeUrl({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: CALLBACK,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        resource: `${env.t.baseUrl}/v1`,
      }),
    );
    const request = new URL(a.headers.get('location')!, env.t.baseUrl).searchParams.get('request')!;
    const forged = await b.post('/oauth/consent', { request, decision: 'allow' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    expect((await b.post('/logout', {})).status).toBe(403);
  });

  it('clickjacking: the sign-in and consent pages refuse to be framed', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const b = new Browser(env.t.baseUrl);
    await b.signIn(env.w.owner.email, env.w.owner.password);
    const a = await b.get(
      authorizeUrl({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: CALLBACK,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        resource: `${env.t.baseUrl}/v1`,
      }),
    );
    for (const res of [await new Browser(env.t.baseUrl).get('/login'), await b.get(a.headers.get('location')!)]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('DNS rebinding against /mcp: a request whose Origin is not allowed is refused with 403 before anything runs', async () => {
    await using env = await startOAuthServer();
    for (const origin of ['https://evil.example', 'http://attacker.localhost.evil.example', 'null']) {
      const r = await postMcp(env.t, toolCall('get_me'), { token: env.w.key, headers: { origin } });
      expect(r.status, origin).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
    }
    expect(
      (await postMcp(env.t, toolCall('get_me'), { token: env.w.key, headers: { origin: env.t.baseUrl } })).status,
    ).toBe(200);
  });
});
