import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWebhookWorker, verifyWebhook } from '../../src/webhooks/index.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { authorizeUrl, pkcePair, postForm, registerClient } from '../oauth/oauthHelpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { ensureChromium, INSTALL_TIMEOUT_MS, openBrowser } from './chromium.js';

// The developer settings screen in a real browser (Debian's Chromium through playwright-core).
// Screenshots of each step are saved under test-output/screenshots/ for review.

beforeAll(ensureChromium, INSTALL_TIMEOUT_MS);

async function setup() {
  const t = await startTestServer();
  const w = await createWorld(t.rt);
  return { t, w, [Symbol.asyncDispose]: () => t.close() };
}

/** Goes to `path`, gets sent to /login, signs in there and comes back. */
async function signIn(
  page: Page,
  t: TestServer,
  user: { email: string; password: string },
  path = '/settings/developer',
) {
  await page.goto(t.baseUrl + path);
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A local OAuth client callback on 127.0.0.1 that shows a plain page. */
async function startCallback() {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url!);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Board Sync</title><p>Back in Board Sync.</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return { url, hits, [Symbol.asyncDispose]: close };
}

describe('developer settings in Chromium', { timeout: 120_000 }, () => {
  it('signs in, consents to an app, uses its token, and sees it under apps and in the activity', async () => {
    await using env = await setup();
    await using cb = await startCallback();
    await using browser = await openBrowser();
    const { page } = browser;
    const { clientId } = await registerClient(env.t, { name: 'Board Sync', redirectUris: [cb.url] });
    const { verifier, challenge } = pkcePair();
    const start = authorizeUrl({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: cb.url,
      scope: 'me:read rooms:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${env.t.baseUrl}/v1`,
      state: 'st-1',
    });

    await signIn(page, env.t, env.w.owner, start);
    await page.waitForURL(/\/oauth\/consent/);
    await expect(page.getByText('Board Sync').first().isVisible()).resolves.toBe(true);
    for (const scope of ['me:read', 'rooms:read']) expect(await page.getByText(scope, { exact: true }).count()).toBe(1);
    await browser.screenshot('01-consent');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.href.startsWith(cb.url));
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('st-1');

    const token = await postForm(env.t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: cb.url,
      code_verifier: verifier,
      client_id: clientId,
    });
    expect(token.status).toBe(200);
    expect((await call(env.t, 'GET', '/v1/me', { key: token.body.access_token })).status).toBe(200);

    await page.goto(`${env.t.baseUrl}/settings/apps`);
    expect(await page.getByRole('row', { name: /Board Sync/ }).count()).toBe(1);
    await browser.screenshot('02-apps');
    await page.getByRole('link', { name: 'Developer settings' }).click();
    await page.waitForURL(/\/settings\/developer$/);
    await page
      .getByRole('navigation', { name: 'Developer settings' })
      .getByRole('link', { name: 'API activity' })
      .click();
    await page.waitForURL(/\/settings\/developer\/activity$/);
    const activity = page.locator('#activity');
    expect(await activity.getByRole('row', { name: /GET \/v1\/me/ }).textContent()).toContain(
      'App “Board Sync” (OAuth)',
    );
    expect(await page.content()).not.toContain(token.body.access_token);
    await browser.screenshot('03-developer-activity');
  });

  it('issues a key (token shown once, copy button), uses it over /v1, revokes it after confirming and sees 401', async () => {
    await using env = await setup();
    await using browser = await openBrowser();
    const { page, context } = browser;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.t.baseUrl });
    await signIn(page, env.t, env.w.owner, '/settings/developer/keys');
    await page.waitForURL(/\/settings\/developer\/keys$/);
    await browser.screenshot('04-developer-empty');

    await page.getByLabel('Name', { exact: true }).fill('Browser key');
    await page.getByLabel('me:read', { exact: true }).check();
    await page.getByLabel('rooms:read', { exact: true }).check();
    await page.getByLabel('Mode').selectOption('live');
    await page.getByLabel('Context').selectOption({ label: 'Acme (organization)' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const field = page.getByLabel('Copy it now');
    const key = await field.inputValue();
    expect(key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(await field.isEditable()).toBe(false);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
    await browser.screenshot('05-key-created');

    const me = await call(env.t, 'GET', '/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.body.organizationId).toBe(env.w.orgId);

    await page.goto(`${env.t.baseUrl}/settings/developer/keys`);
    expect(await page.content()).not.toContain(key);
    expect(await page.getByLabel('Copy it now').count()).toBe(0);
    const row = page.locator('#active-keys').getByRole('row', { name: /Browser key/ });
    const text = (await row.textContent())!;
    expect(text).toContain(`svc_live_…${key.slice(-4)}`);
    expect(text).toContain('me:read, rooms:read');
    expect(text).not.toContain('never'); // last used: just now
    await browser.screenshot('06-key-listed');

    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(/\/settings\/developer\/keys\/revoke\?key=/);
    await page.getByRole('heading', { name: 'Revoke API key?' }).waitFor();
    expect((await call(env.t, 'GET', '/v1/me', { key })).status).toBe(200);
    await browser.screenshot('07-revoke-confirm');
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(/notice=key-revoked/);
    await page.getByText('The key was revoked.').waitFor();
    expect(
      await page
        .locator('#active-keys')
        .getByRole('row', { name: /Browser key/ })
        .count(),
    ).toBe(0);
    await page.getByText('Revoked keys (1)').click();
    expect(
      await page
        .locator('#revoked-keys')
        .getByRole('row', { name: /Browser key/ })
        .textContent(),
    ).toContain('Revoked');
    expect((await call(env.t, 'GET', '/v1/me', { key })).status).toBe(401);
    await browser.screenshot('08-key-revoked');
  });

  it('works without JavaScript: the token is in the read-only field, the copy button stays hidden', async () => {
    await using env = await setup();
    await using browser = await openBrowser({ javaScript: false });
    const { page } = browser;
    await signIn(page, env.t, env.w.member, '/settings/developer/keys');
    await page.waitForURL(/\/settings\/developer\/keys$/);
    await page.getByLabel('Name', { exact: true }).fill('No-JS key');
    await page.getByLabel('me:read', { exact: true }).check();
    await page.getByLabel('Context').selectOption('personal');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('Copy it now').inputValue();
    expect(key).toMatch(/^svc_test_/);
    expect(await page.getByRole('button', { name: 'Copy', exact: true }).count()).toBe(0);
    expect((await call(env.t, 'GET', '/v1/me', { key })).body.organizationId).toBeNull();
    await browser.screenshot('09-key-created-without-js');
  });

  it('creates a webhook, sees a delivery in its history, rotates, completes the rotation and redelivers', async () => {
    await using env = await setup();
    await using rx = await startReceiver();
    await using browser = await openBrowser();
    const { page } = browser;
    const worker = createWebhookWorker({ services: env.t.rt.services });
    const trigger = async () => {
      expect(
        (await call(env.t, 'POST', `/v1/rooms/${env.w.roomId}/messages`, { key: env.w.key, body: { body: 'hi' } }))
          .status,
      ).toBe(201);
      expect(await worker.runOnce()).toBe(1);
    };
    await signIn(page, env.t, env.w.owner, '/settings/developer/webhooks');
    await page.waitForURL(/\/settings\/developer\/webhooks$/);

    // the SSRF guard refuses internal addresses with a clear message
    // exact: the scope checkboxes `rooms:read` and `rooms:write` contain "Room" too
    await page.getByLabel('Room', { exact: true }).selectOption({ label: 'General' });
    await page.getByLabel('URL', { exact: true }).fill('http://10.1.2.3/hook');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const alert = page.locator('#webhooks').getByRole('alert');
    expect(await alert.textContent()).toContain(
      'This URL cannot receive webhooks: URL points to an internal or special address; an operator may allow it',
    );
    await browser.screenshot('10-webhook-ssrf-refused');

    await page.getByLabel('URL', { exact: true }).fill(rx.url);
    await page.getByLabel('API version').selectOption('2026-06-09');
    await page.getByLabel('Custom headers').fill('X-Team: blue\nAuthorization: Bearer receiver-credential');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByLabel('Copy it now').inputValue();
    expect(secret.length).toBeGreaterThan(30);
    await browser.screenshot('11-webhook-created');

    await trigger();
    expect(verifyWebhook({ rawBody: rx.requests[0].body, headers: rx.requests[0].headers, secrets: [secret] }).ok).toBe(
      true,
    );
    expect(rx.requests[0].headers['x-team']).toBe('blue');
    await page.goto(`${env.t.baseUrl}/settings/developer/webhooks`);
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('link', { name: rx.url }).click();
    await page.waitForURL(/\/settings\/developer\/webhooks\/[^/?]+$/);
    const hookUrl = page.url();
    expect(await page.content()).not.toContain('receiver-credential');
    const card = page.locator('article.card', { has: page.getByRole('heading', { name: rx.url }) });
    const first = card.getByRole('row', { name: /message\.created/ });
    expect(await first.textContent()).toMatch(/message\.created\s*200\s*Yes\s*\d+ ms/);
    await browser.screenshot('12-webhook-delivered');

    await card.getByLabel('Rotation period (days)').fill('7');
    await card.getByRole('button', { name: 'Start rotation' }).click();
    await page.getByRole('heading', { name: 'Start rotation?' }).waitFor();
    await page.getByRole('button', { name: 'Start rotation' }).click();
    const next = await page.getByLabel('Copy it now').inputValue();
    expect(next).not.toBe(secret);
    expect(await page.content()).toContain('deliveries are signed with both the current secret and this next secret');
    await browser.screenshot('13-rotation-started');
    await trigger();
    for (const s of [secret, next])
      expect(verifyWebhook({ rawBody: rx.requests[1].body, headers: rx.requests[1].headers, secrets: [s] }).ok).toBe(
        true,
      );

    await page.goto(hookUrl);
    expect(await page.content()).not.toContain(next);
    await card.getByRole('button', { name: 'Complete rotation' }).click();
    await page.getByRole('heading', { name: 'Complete rotation?' }).waitFor();
    await page.getByRole('button', { name: 'Complete rotation' }).click();
    await page.waitForURL(/notice=rotation-completed/);
    await page.getByText('Rotation completed').waitFor();
    await browser.screenshot('14-rotation-completed');
    await trigger();
    expect(verifyWebhook({ rawBody: rx.requests[2].body, headers: rx.requests[2].headers, secrets: [secret] }).ok).toBe(
      false,
    );
    expect(verifyWebhook({ rawBody: rx.requests[2].body, headers: rx.requests[2].headers, secrets: [next] }).ok).toBe(
      true,
    );

    await page.reload();
    expect(await card.getByRole('row', { name: /message\.created/ }).count()).toBe(3);
    await card.getByRole('button', { name: 'Redeliver' }).last().click();
    await page.waitForURL(/notice=redelivered/);
    await page.getByText('Redelivered: the receiver accepted the event.').waitFor();
    expect(rx.requests).toHaveLength(4);
    expect(rx.requests[3].headers['svc-webhook-id']).toBe(rx.requests[0].headers['svc-webhook-id']);
    expect(await card.getByRole('row', { name: /\(redelivery\)/ }).count()).toBe(1);
    await browser.screenshot('15-redelivered');
    await worker.stop();
  });
});
