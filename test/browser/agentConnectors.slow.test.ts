import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { createRoom, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { startReceiver } from '../webhooks/helpers.js';
import { addConnector, invokeDue, invokerKey, startRun } from '../agents/helpers.js';
import { ensureChromium, INSTALL_TIMEOUT_MS, openBrowser } from './chromium.js';

// Agent connectors (/settings/developer/mcp) and recent agent runs (/settings/developer/agent-runs), in a real
// browser.

beforeAll(ensureChromium, INSTALL_TIMEOUT_MS);

async function signIn(page: Page, t: TestServer, user: { email: string; password: string }) {
  await page.goto(`${t.baseUrl}/settings/developer/mcp`);
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/settings\/developer/);
}

describe('agent connectors in Chromium', { timeout: 120_000 }, () => {
  it('an organization admin registers a connector (secret shown once), sees its runs, and deactivates it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([{ status: 200, body: '{"status":"succeeded","output":null}' }]);
    await using browser = await openBrowser();
    const { page } = browser;
    await signIn(page, t, w.owner);

    // an internal address is refused with the reason, and nothing is stored
    const agents = page.locator('#agents');
    await agents.getByLabel('Connector name', { exact: true }).fill('Metadata');
    await agents.getByLabel('Connector URL', { exact: true }).fill('http://169.254.169.254/latest');
    await agents.getByRole('button', { name: 'Create connector' }).click();
    expect(await page.locator('#agents').getByRole('alert').textContent()).toContain('cannot be a connector');
    expect(
      Number((await sql<{ n: number }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "agent_connectors"')).rows[0].n),
    ).toBe(0);

    await page.locator('#agents').getByLabel('Connector name', { exact: true }).fill('Lines to tasks');
    await page.locator('#agents').getByLabel('Connector URL', { exact: true }).fill(rx.url);
    await page.getByLabel('Delegate tasks:write', { exact: true }).check();
    await page.getByLabel('Delegate messages:write', { exact: true }).check();
    await page.getByRole('button', { name: 'Create connector' }).click();
    const secret = await page.getByLabel('Copy it now').inputValue();
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator('#agents').getByRole('row', { name: /Lines to tasks/ });
    for (const scope of ['mcp:tools', 'messages:write', 'tasks:write'])
      expect(await row.textContent()).toContain(scope);
    const [stored] = (
      await sql<{ id: string; scopes: string; secretEnc: string }>(
        t.rt.ds,
        'SELECT "id", "scopes", "secretEnc" FROM "agent_connectors"',
      )
    ).rows;
    expect(JSON.parse(stored.scopes).sort()).toEqual(['mcp:tools', 'messages:write', 'tasks:write']);
    expect(stored.secretEnc).not.toContain(secret);

    // a run shows under the room's recent runs
    const key = await invokerKey(t.rt, w);
    const run = (await startRun(t, key, w.roomId, stored.id, { text: 'Plan the offsite' })).body;
    await invokeDue(t.rt);
    await page
      .getByRole('navigation', { name: 'Developer settings' })
      .getByRole('link', { name: 'Agent runs' })
      .click();
    await page.waitForURL(/\/settings\/developer\/agent-runs$/);
    expect(await page.getByLabel('Copy it now').count()).toBe(0);
    const runRow = page.locator('#agent-runs').getByRole('row', { name: new RegExp(run.id) });
    expect(await runRow.textContent()).toContain('succeeded');
    expect(await runRow.textContent()).toContain('Plan the offsite');
    expect(await runRow.textContent()).toContain('Lines to tasks');

    await page.goto(`${t.baseUrl}/settings/developer/mcp#agents`);

    await page.locator('#agents').getByRole('button', { name: 'Deactivate Lines to tasks' }).click();
    await page.waitForURL(/notice=connector-deactivated/);
    expect(await page.getByRole('status').first().textContent()).toContain('inactive');
    expect(
      await page
        .locator('#agents')
        .getByRole('row', { name: /Lines to tasks/ })
        .textContent(),
    ).toContain('inactive');
    expect((await startRun(t, key, w.roomId, stored.id)).status).toBe(409);
  });

  it('shows a plain member no connector form, but the runs of their room, and none of a room they are not in', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const c = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/x');
    const key = await invokerKey(t.rt, w);
    const mine = (await startRun(t, key, w.roomId, c.id, { text: 'Visible to the member' })).body;
    const secret = await t.rt.services.ds.transaction((m) =>
      createRoom(m, new Date(), { name: 'Board', createdById: w.owner.id, organizationId: w.orgId }),
    );
    const hidden = (await startRun(t, key, secret.id, c.id, { text: 'Board only' })).body;
    await using browser = await openBrowser();
    await signIn(browser.page, t, w.member);
    const agents = browser.page.locator('#agents');
    expect(await agents.textContent()).toContain('You do not administer an organization');
    expect(await browser.page.getByRole('button', { name: 'Create connector' }).count()).toBe(0);
    await browser.page.goto(`${t.baseUrl}/settings/developer/agent-runs`);
    const runs = browser.page.locator('#agent-runs');
    expect(await runs.getByRole('row', { name: new RegExp(mine.id) }).textContent()).toContain('queued');
    expect(await runs.getByRole('row', { name: new RegExp(hidden.id) }).count()).toBe(0);
    expect(await runs.textContent()).not.toContain('Board only');
  });
});
