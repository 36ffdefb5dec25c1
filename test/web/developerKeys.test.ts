import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../db/entities/index.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { call } from '../helpers/harness.js';
import { captureLogs, DevBrowser, secretShown, startDeveloperEnv } from './developerHelpers.js';

const KEY_FORM = { name: 'CI bot', scopes: ['me:read', 'rooms:read'], mode: 'live' };

describe('/settings/developer: API keys', () => {
  it('labels the key form as the contract says', async () => {
    await using env = await startDeveloperEnv();
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    const { status, html, res } = await b.page('/settings/developer/keys');
    expect(status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('content-security-policy')).not.toContain('script-src');
    expect(html).toMatch(/<label for="key-name">Name<\/label>\s*<input id="key-name" name="name"/);
    for (const scope of SCOPES) {
      const id = `scope-${scope.replace(/[^a-z]+/g, '-')}`;
      expect(html).toContain(`<input type="checkbox" id="${id}" name="scopes" value="${scope}"`);
      expect(html).toContain(`<label for="${id}">${scope}</label>`);
    }
    expect(html).toContain('Read your own profile');
    expect(html).toMatch(
      /<label for="key-mode">Mode<\/label>\s*<select id="key-mode" name="mode"[^>]*><option value="live">live<\/option><option value="test" selected>test<\/option><\/select>/,
    );
    expect(html).toContain('<label for="key-context">Context</label>');
    expect(html).toContain('<button type="submit" class="primary">Create key</button>');
    expect(html).toContain('href="/settings/apps"');
  });

  it('issues a key, shows its token once, lists prefix…last 4, and the token works on /v1', async () => {
    await using env = await startDeveloperEnv();
    const logs = captureLogs(env.t);
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    await b.page('/settings/developer/keys');
    const r = await b.submit('/settings/developer/keys', { ...KEY_FORM, context: env.w.orgId });
    expect(r.status).toBe(200);
    const token = secretShown(r.html)!;
    expect(token).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(r.html.split(token)).toHaveLength(2); // exactly once
    expect(r.html).toContain('shown only once');
    expect(r.res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(r.html).toContain('<script src="/settings/developer/copy.js" defer></script>');
    expect(r.html).toContain(`<code>svc_live_…${token.slice(-4)}</code>`);

    const me = await call(env.t, 'GET', '/v1/me', { key: token });
    expect(me.status).toBe(200);
    expect(me.body.organizationId).toBe(env.w.orgId);
    expect((await call(env.t, 'GET', '/v1/rooms', { key: token })).status).toBe(200);
    expect((await call(env.t, 'GET', `/v1/rooms/${env.w.roomId}/messages`, { key: token })).status).toBe(403);

    const again = await b.page('/settings/developer/keys');
    expect(again.html).not.toContain(token);
    expect(secretShown(again.html)).toBeNull();
    expect(again.html).not.toContain('copy.js');
    const row = /<tr>\s*<td id="key-[^"]+-name"><strong>CI bot<\/strong><\/td>[\s\S]*?<\/tr>/.exec(again.html)![0];
    expect(row).toContain(`svc_live_…${token.slice(-4)}`);
    expect(row).toContain('<code>me:read</code>, <code>rooms:read</code>');
    expect(row).toContain('<td>live</td>');
    expect(row).toContain('<td>Acme</td>');
    expect(row).toContain('<time datetime="2026-06-10T12:00:00.000Z">2026-06-10 12:00 UTC</time>');
    expect(row).toContain('>Revoke</button>');
    expect(logs.text()).toContain('API key issued in developer settings');
    expect(logs.text()).not.toContain(token);
    expect(logs.text()).not.toContain(token.slice(9));
  });

  it('issues a key for the personal context', async () => {
    await using env = await startDeveloperEnv();
    const b = await DevBrowser.signedIn(env.t, env.w.member);
    await b.page('/settings/developer/keys');
    const r = await b.submit('/settings/developer/keys', {
      name: 'mine',
      scopes: ['me:read'],
      mode: 'test',
      context: 'personal',
    });
    const token = secretShown(r.html)!;
    expect(token).toMatch(/^svc_test_/);
    expect((await call(env.t, 'GET', '/v1/me', { key: token })).body.organizationId).toBeNull();
    expect((await b.page('/settings/developer/keys')).html).toContain('<td>Personal</td>');
  });

  it('refuses bad key forms with a clear message and keeps what was typed', async () => {
    await using env = await startDeveloperEnv();
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    await b.page('/settings/developer/keys');
    const cases: [Record<string, string | string[]>, string][] = [
      [{ ...KEY_FORM, scopes: [], context: 'personal' }, 'Choose at least one scope.'],
      [{ ...KEY_FORM, name: '  ', context: 'personal' }, 'Give the key a name.'],
      [{ ...KEY_FORM, mode: 'prod', context: 'personal' }, 'Choose the mode: live or test.'],
      [{ ...KEY_FORM, scopes: ['me:read', 'admin:all'], context: 'personal' }, 'Unknown scope.'],
      [{ ...KEY_FORM, context: 'org_someone_else' }, 'Choose one of your organizations or Personal.'],
    ];
    for (const [fields, text] of cases) {
      const r = await b.submit('/settings/developer/keys', fields);
      expect(r.status).toBe(400);
      expect(r.html).toContain(`<p class="error" role="alert">${text}</p>`);
      expect(secretShown(r.html)).toBeNull();
    }
    const kept = await b.submit('/settings/developer/keys', {
      name: 'keep <me>',
      scopes: [],
      mode: 'live',
      context: 'personal',
    });
    expect(kept.html).toContain('value="keep &lt;me&gt;"');
    expect(await env.t.rt.ds.getRepository(ApiKey).countBy({ name: 'keep <me>' })).toBe(0);
  });

  it('revokes after a confirmation step; the key gets 401 at once', async () => {
    await using env = await startDeveloperEnv();
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    await b.page('/settings/developer/keys');
    const token = secretShown(
      (await b.submit('/settings/developer/keys', { ...KEY_FORM, context: env.w.orgId })).html,
    )!;
    const key = await env.t.rt.ds.getRepository(ApiKey).findOneByOrFail({ name: 'CI bot' });

    const confirm = await b.page(`/settings/developer/keys/revoke?key=${key.id}`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Revoke API key?');
    expect(confirm.html).toContain(`<code>svc_live_…${token.slice(-4)}</code>`);
    expect(confirm.html).toContain('<input type="hidden" name="confirm" value="yes">');
    expect(confirm.html).not.toContain(token);
    expect((await call(env.t, 'GET', '/v1/me', { key: token })).status).toBe(200);

    // a POST without the confirmation answers with the confirmation step, and revokes nothing
    const unconfirmed = await b.submit('/settings/developer/keys/revoke', { key: key.id });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.html).toContain('Revoke API key?');
    expect((await call(env.t, 'GET', '/v1/me', { key: token })).status).toBe(200);

    const done = await b.submit('/settings/developer/keys/revoke', { key: key.id, confirm: 'yes' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/settings/developer/keys?notice=key-revoked#keys');
    expect((await call(env.t, 'GET', '/v1/me', { key: token })).status).toBe(401);
    const after = await b.page(done.location!);
    expect(after.html).toContain('The key was revoked.');
    const active = /<table id="active-keys">[\s\S]*?<\/table>/.exec(after.html)![0];
    expect(active).not.toContain('CI bot');
    expect(active).toContain('<strong>test</strong>'); // the world's own key stays
    const revoked = /<details id="revoked-keys"><summary>Revoked keys \(1\)<\/summary>[\s\S]*?<\/details>/.exec(
      after.html,
    )![0];
    expect(revoked).toContain('<strong>CI bot</strong>');
    expect(revoked).toContain('<span class="badge off">Revoked</span>');
    expect(revoked).not.toContain('>Revoke</button>');
  });

  it('records when a key was last used, at most once a minute', async () => {
    await using env = await startDeveloperEnv();
    const repo = env.t.rt.ds.getRepository(ApiKey);
    expect((await repo.findOneByOrFail({ id: env.w.keyId })).lastUsedAt).toBeNull();
    await call(env.t, 'GET', '/v1/me', { key: env.w.key });
    expect((await repo.findOneByOrFail({ id: env.w.keyId })).lastUsedAt).toBe('2026-06-10T12:00:00.000Z');
    env.clock.advance(59_000);
    await call(env.t, 'GET', '/v1/me', { key: env.w.key });
    expect((await repo.findOneByOrFail({ id: env.w.keyId })).lastUsedAt).toBe('2026-06-10T12:00:00.000Z');
    env.clock.advance(1_000);
    await call(env.t, 'GET', '/v1/me', { key: env.w.key });
    expect((await repo.findOneByOrFail({ id: env.w.keyId })).lastUsedAt).toBe('2026-06-10T12:01:00.000Z');
    // a refused credential is not a use
    await repo.update({ id: env.w.keyId }, { revokedAt: '2026-06-10T12:01:30.000Z' });
    env.clock.advance(120_000);
    expect((await call(env.t, 'GET', '/v1/me', { key: env.w.key })).status).toBe(401);
    expect((await repo.findOneByOrFail({ id: env.w.keyId })).lastUsedAt).toBe('2026-06-10T12:01:00.000Z');
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    expect((await b.page('/settings/developer/keys')).html).toContain(
      '<time datetime="2026-06-10T12:01:00.000Z">2026-06-10 12:01 UTC</time>',
    );
  });
});
