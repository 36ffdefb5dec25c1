import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWebhookWorker } from '../../src/webhooks/index.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { clockAt } from '../web/developerHelpers.js';
import { addWebhook, startReceiver } from '../webhooks/helpers.js';
import { ensureChromium, INSTALL_TIMEOUT_MS, openBrowser } from './chromium.js';

// Webhook debugging on the developer settings page in Chromium: the reason of an automatic disable and the one-click
// re-activation, "Send test event" with its outcome at once, and a delivery's detail (exact request, every attempt).

beforeAll(ensureChromium, INSTALL_TIMEOUT_MS);

async function signIn(page: Page, t: TestServer, user: { email: string; password: string }) {
  await page.goto(`${t.baseUrl}/settings/developer`);
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/settings\/developer$/);
}

describe('webhook debugging on the developer page in Chromium', { timeout: 180_000 }, () => {
  it('shows why a webhook was disabled, re-activates it in one click, sends test events and shows a delivery with every attempt', async () => {
    const clock = clockAt(new Date().toISOString());
    await using t = await startTestServer({ now: clock.now, env: { SVC_WEBHOOK_DISABLE_AFTER_HOURS: '72' } });
    const w = await createWorld(t.rt);
    await using failing = await startReceiver(
      Array.from({ length: 5 }, () => ({ status: 500, body: 'receiver exploded' })),
    );
    await using healthy = await startReceiver();
    const bad = await addWebhook(t.rt, w.roomId, failing.url, {
      headers: [['Authorization', 'Bearer receiver-credential']],
    });
    await addWebhook(t.rt, w.roomId, healthy.url);
    const worker = createWebhookWorker({ services: t.rt.services });
    const event = async () => {
      expect(
        (await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: 'R' } })).status,
      ).toBe(201);
      for (let i = 0; i < 4; i++) {
        await worker.runOnce();
        clock.advance(10_000);
      }
    };
    await event();
    clock.advance(73 * 3_600_000);
    await event();
    await worker.stop();
    expect(failing.requests).toHaveLength(5);

    await using browser = await openBrowser();
    const { page } = browser;
    await signIn(page, t, w.owner);
    // the list leads to each webhook's own page
    await page.getByRole('navigation', { name: 'Developer settings' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(/\/settings\/developer\/webhooks$/);
    const listed = page.getByRole('row', { name: new RegExp(failing.url) });
    expect(await listed.textContent()).toContain('Inactive');
    await listed.getByRole('link').click();
    await page.waitForURL(new RegExp(`/settings/developer/webhooks/${bad.id}$`));
    const badCard = page.locator('article.card', { has: page.getByRole('heading', { name: failing.url }) });
    const goodCard = page.locator('article.card', { has: page.getByRole('heading', { name: healthy.url }) });
    const why = badCard.getByRole('alert');
    expect(await why.textContent()).toMatch(
      /Disabled automatically .*UTC: Every delivery attempt failed for 3 days without a success in between/,
    );
    expect(await badCard.getByRole('button', { name: 'Send test event' }).count()).toBe(0);
    await browser.screenshot('22-01-webhook-disabled');

    // the delivery detail: the exact request (signature, body; the custom header's value hidden) and every attempt
    await badCard
      .getByRole('row', { name: /record\.created/ })
      .last()
      .getByRole('link', { name: 'Details' })
      .click();
    await page.waitForURL(/\/settings\/developer\/webhooks\/delivery\?/);
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();
    const rows = page.getByRole('table').getByRole('row');
    expect(await rows.count()).toBe(5); // the header row and four attempts
    for (let i = 1; i <= 4; i++)
      expect(await rows.nth(i).textContent()).toMatch(new RegExp(`${i}\\s*automatic[\\s\\S]*500`));
    const request = await page
      .locator('section', { has: page.getByRole('heading', { name: 'Request as sent' }) })
      .textContent();
    expect(request).toContain(`POST ${failing.url}`);
    expect(request).toContain(`Svc-Webhook-Signature: ${failing.requests[3].headers['svc-webhook-signature']}`);
    expect(request).toContain('Authorization: (custom header value hidden)');
    expect(request).toContain(failing.requests[3].body.toString());
    const html = await page.content();
    expect(html).not.toContain('receiver-credential');
    expect(html).not.toContain(bad.secret);
    await page.getByText('Attempt 1 (automatic)').click();
    await page.getByText('receiver exploded').first().waitFor();
    await browser.screenshot('22-02-delivery-detail');
    await page.getByRole('link', { name: 'Back to the webhook' }).click();

    // one click re-activates; the reason is gone
    await badCard.getByRole('button', { name: 'Activate' }).click();
    await page.waitForURL(/notice=webhook-activated/);
    expect(await badCard.getByText('Disabled automatically').count()).toBe(0);

    // Send test event: the outcome at once, and the delivery in the history
    await page.goto(`${t.baseUrl}/settings/developer/webhooks`);
    await page.getByRole('link', { name: healthy.url }).click();
    await goodCard.getByRole('button', { name: 'Send test event' }).click();
    const notice = page.locator('#webhooks').getByRole('status').first();
    expect(await notice.textContent()).toMatch(/^Test event sent: the receiver answered 200 in \d+ ms\.$/);
    expect(healthy.requests.at(-1)!.headers['svc-webhook-test']).toBe('true');
    expect(await goodCard.getByRole('row', { name: /webhook\.test/ }).count()).toBe(1);
    await browser.screenshot('22-03-test-event-sent');

    await failing.close();
    await page.goto(`${t.baseUrl}/settings/developer/webhooks/${bad.id}`);
    await badCard.getByRole('button', { name: 'Send test event' }).click();
    const alert = page.locator('#webhooks').getByRole('alert').first();
    expect(await alert.textContent()).toMatch(/^Test event failed: no response \(connection_refused\)/);
    await browser.screenshot('22-04-test-event-failed');
  });
});
