import { describe, expect, it } from 'vitest';
import { Membership } from '../../db/entities/index.js';
import { listAudit } from '../../src/auth/audit.js';
import { createRoom } from '../../src/domain/rooms.js';
import { call } from '../helpers/harness.js';
import { Browser, obtainTokens, registerClient, startOAuthServer } from './oauthHelpers.js';

describe('OAuth access tokens on /v1', () => {
  it('a /v1 token acts as the consenting user in the chosen context; an /mcp token gets 403 invalid_audience on /v1', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const v1 = await obtainTokens(t, w, app, { resource: `${t.baseUrl}/v1` });
    const me = await call(t, 'GET', '/v1/me', { key: v1.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: w.owner.id,
      email: w.owner.email,
      organizationId: w.orgId,
      billingContext: 'organization',
    });
    const rooms = await call(t, 'GET', '/v1/rooms', { key: v1.access_token });
    expect(rooms.status).toBe(200);
    expect(rooms.body.data.map((r: { id: string }) => r.id)).toContain(w.roomId);

    const personal = await obtainTokens(t, w, app, { organization: 'personal' });
    const mePersonal = await call(t, 'GET', '/v1/me', { key: personal.access_token });
    expect(mePersonal.body).toMatchObject({ id: w.owner.id, organizationId: null, billingContext: 'individual' });
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}`, { key: personal.access_token })).status).toBe(404);

    // a refresh token is no access token
    expect((await call(t, 'GET', '/v1/me', { key: v1.refresh_token })).status).toBe(401);

    const mcp = await obtainTokens(t, w, app, { resource: `${t.baseUrl}/mcp` });
    const wrong = await call(t, 'GET', '/v1/me', { key: mcp.access_token });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe('invalid_audience');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  it('refuses a consent for an organization the user does not belong to', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    await expect(obtainTokens(t, w, app, { organization: 'org_01JXXXXXXXXXXXXXXXXXXXXXXX' })).rejects.toThrow(
      /consent answer 400/,
    );
  });

  it('an agent token acts as actor=agent for its user, audited with the delegating user, never beyond the user', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const agent = await registerClient(t, { name: 'Helper Bot', kind: 'agent' });
    const tokens = await obtainTokens(t, w, agent, { user: w.member, scope: 'me:read rooms:read' });
    const me = await call(t, 'GET', '/v1/me', { key: tokens.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(w.member.id);

    // a room of the organization the member is not in: 404 for the agent as for the member
    const s = t.rt.services;
    const hidden = await s.ds.transaction((m) =>
      createRoom(m, s.now(), { name: 'Owners only', createdById: w.owner.id, organizationId: w.orgId }),
    );
    expect((await call(t, 'GET', `/v1/rooms/${hidden.id}`, { key: tokens.access_token })).status).toBe(404);

    const rows = await listAudit(s, { actor: 'agent' });
    expect(rows.length).toBe(2);
    const meRow = rows.find((r) => r.routePattern === '/v1/me')!;
    expect(meRow).toMatchObject({
      actor: 'agent',
      authMethod: 'oauth_bearer',
      delegatingUserId: w.member.id,
      userId: w.member.id,
      organizationId: w.orgId,
      apiKeyId: null,
      tokenId: expect.stringMatching(/^tok_/),
      statusCode: 200,
      scopes: ['me:read', 'rooms:read'],
    });
    expect(JSON.stringify(rows)).not.toContain(tokens.access_token);

    // a user-kind app is audited as actor=user, without a delegating user
    const app = await registerClient(t);
    const userTokens = await obtainTokens(t, w, app);
    await call(t, 'GET', '/v1/me', { key: userTokens.access_token });
    const [userRow] = await listAudit(s, { actor: 'user' });
    expect(userRow).toMatchObject({
      actor: 'user',
      authMethod: 'oauth_bearer',
      delegatingUserId: null,
      userId: w.owner.id,
    });
  });

  it('never accepts the session cookie as a credential on /v1', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    await b.signIn(w.owner.email, w.owner.password);
    const session = b.cookies.get('svc_session')!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const attempts: Record<string, string>[] = [
      { authorization: `Bearer ${session}` },
      { 'x-api-key': session },
      { cookie: `svc_session=${session}` },
    ];
    for (const headers of attempts) {
      const r = await call(t, 'GET', '/v1/me', { headers });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
  });

  it('a token stops working when the user leaves the organization it acts in', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const tokens = await obtainTokens(t, w, app, { user: w.member });
    expect((await call(t, 'GET', '/v1/me', { key: tokens.access_token })).status).toBe(200);
    await t.rt.ds.getRepository(Membership).delete({ userId: w.member.id });
    expect((await call(t, 'GET', '/v1/me', { key: tokens.access_token })).status).toBe(401);
  });
});
