import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import {
  ALL_SCOPES,
  call,
  createWorld,
  issueKey,
  startTestServer,
  type TestServer,
  type World,
} from '../helpers/harness.js';
import { obtainTokens, registerClient } from '../oauth/oauthHelpers.js';
import { ensureChromium, INSTALL_TIMEOUT_MS, openBrowser, type TestBrowser } from './chromium.js';

// MCP Apps in Chromium: a small host page (appsHost/host.ts) connects the v2 SDK's client to svc over MCP and
// hosts each view in a sandboxed frame through the ext-apps AppBridge. A person approves a record, moves and
// assigns a task and sees a new message appear; svc records it as that person, through the host, not an agent.

const HOST_ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'appsHost', 'host.ts');

let t: TestServer & AsyncDisposable;
let w: World;
let memberKey: string;
/** The owner's OAuth access token for /mcp, as a host holds it after the person signed in. */
let ownerToken: string;
let browser: TestBrowser;
let host: http.Server;
let hostUrl: string;

beforeAll(async () => {
  ensureChromium();
  const bundle = await build({
    entryPoints: [HOST_ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    logLevel: 'silent',
  });
  const js = bundle.outputFiles[0].text;
  host = http.createServer((req, res) => {
    if (req.url === '/host.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><html><head><title>host</title></head><body><script src="/host.js"></script></body></html>');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/`;
  t = await startTestServer();
  w = await createWorld(t.rt);
  const scope =
    'mcp:tools rooms:read records:read records:write tasks:read tasks:write messages:read messages:write files:read';
  ownerToken = (await obtainTokens(t, w, await registerClient(t), { resource: `${t.baseUrl}/mcp`, scope }))
    .access_token;
  memberKey = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: [...ALL_SCOPES] })).token;
  browser = await openBrowser();
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.[Symbol.asyncDispose]();
  await t?.[Symbol.asyncDispose]();
  await new Promise((resolve) => host?.close(resolve));
});

/** Opens the host page afresh and a tool's view in it, as the owner (signed in with OAuth); returns its frame. */
async function openView(
  tool: string,
  args: Record<string, unknown>,
  o: { token?: string; headers?: Record<string, string> } = {},
): Promise<{ page: Page; frame: Frame; resourceUri: string; csp: unknown; appOnly: string[] }> {
  const { page } = browser;
  await page.goto(hostUrl);
  await page.waitForFunction(() => typeof (globalThis as any).openView === 'function');
  const opened = await page.evaluate((p) => (globalThis as any).openView(p), {
    mcpUrl: `${t.baseUrl}/mcp`,
    token: o.token ?? ownerToken,
    headers: o.headers,
    tool,
    args,
  });
  const frame = page.frames().find((f) => f !== page.mainFrame())!;
  return { page, frame, ...opened };
}

const recordOf = async (id: string) =>
  (await call(t, 'GET', `/v1/rooms/${w.roomId}/records/${id}`, { key: w.key })).body as { approvalState: string };

/**
 * A record by the member, with approval requested by the member: the owner may approve it. With `rejectedWith`,
 * an earlier request of the member's was rejected by the owner with that comment first.
 */
async function pendingRecord(title: string, rejectedWith?: string): Promise<string> {
  const rec = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
    key: memberKey,
    body: { title, body: 'minutes' },
  });
  const step = async (action: string, key: string, body: Record<string, string> = {}) => {
    const r = await call(t, 'POST', `/v1/rooms/${w.roomId}/records/${rec.body.id}/approval/${action}`, { key, body });
    expect(r.status).toBe(200);
  };
  if (rejectedWith !== undefined) {
    await step('request', memberKey);
    await step('reject', w.key, { comment: rejectedWith });
  }
  await step('request', memberKey);
  return rec.body.id as string;
}

/** Uploads a small file attached to a message, as the member; returns its id. */
async function attach(messageId: string, filename: string): Promise<string> {
  const up = await call(
    t,
    'POST',
    `/v1/rooms/${w.roomId}/files?filename=${encodeURIComponent(filename)}&messageId=${messageId}`,
    { key: memberKey, body: 'notes', headers: { 'content-type': 'text/plain' } },
  );
  expect(up.status).toBe(201);
  return up.body.id as string;
}

/** The MCP audit rows of a tool, newest first. */
const auditRows = async (tool: string) =>
  (await listAudit(t.rt.services, { limit: 200 })).filter((r) => r.surface === 'mcp' && r.routePattern === tool);

describe('MCP Apps views in Chromium, hosted through the ext-apps AppBridge', { timeout: 180_000 }, () => {
  it('approves a record from its view: the title shows as text, and svc records the owner acting through the host', async () => {
    const title = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">Q3 plan';
    const earlier = '<img src=x onerror="window.pwned=5">Add the Q2 figures';
    const id = await pendingRecord(title, earlier);
    const { frame, resourceUri, csp, appOnly } = await openView('get_record', { roomId: w.roomId, recordId: id });
    expect(resourceUri).toBe('ui://svc/record');
    // the SDK client declared the extension: its list holds the view's own tool, marked for the app alone
    expect(appOnly).toEqual(['list_record_approvals']);
    expect(csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    await frame.waitForSelector('#title');
    // a record title with script: shown as the characters it is, nothing of it runs
    expect(await frame.textContent('#title')).toBe(title);
    expect(await frame.locator('img').count()).toBe(0);
    expect(await frame.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await frame.textContent('#state')).toBe('pending');
    // its approvers and their decisions (list_record_approvals through the host): the earlier request, rejected
    // by the owner with a comment holding markup, shown as text; the pending one, asked by the member
    await frame.waitForSelector('#decisions li[data-status="rejected"]');
    const rejected = '#decisions li[data-status="rejected"]';
    expect(await frame.textContent(`${rejected} .decider`)).toMatch(/^ by owner · /);
    expect(await frame.textContent(`${rejected} .meta`)).toMatch(/^requested by member · /);
    expect(await frame.textContent(`${rejected} q`)).toBe(earlier);
    expect(await frame.textContent('#decisions li[data-status="pending"] .meta')).toMatch(/^requested by member/);
    expect(await frame.locator('#decisions li').count()).toBe(2);
    expect(await frame.locator('img').count()).toBe(0);

    await frame.fill('#comment', 'Looks right to me');
    await frame.click('button[data-action="approve_record"]');
    await frame.waitForSelector('#state:text("approved")');
    // the view reads the history again: the decision on top, by the owner, with its comment; the earlier one kept
    await frame.waitForSelector('#decisions li[data-status="approved"]');
    expect(await frame.locator('#decisions li[data-status="pending"]').count()).toBe(0);
    const approved = '#decisions li[data-status="approved"]';
    expect(await frame.textContent(`${approved} q`)).toBe('Looks right to me');
    expect(await frame.textContent(`${approved} .decider`)).toMatch(/^ by owner · /);
    expect(await frame.getAttribute('#decisions li:first-child', 'data-status')).toBe('approved');
    expect(await frame.locator('#decisions li').count()).toBe(2);
    expect(await frame.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    // the history was read as the owner, through the host: an audit row of the app-only tool for each reading
    const reads = await auditRows('list_record_approvals');
    expect(reads.length).toBeGreaterThanOrEqual(2);
    for (const r of reads) expect(r).toMatchObject({ statusCode: 200, actor: 'user', userId: w.owner.id });

    expect((await recordOf(id)).approvalState).toBe('approved');
    const [row] = await auditRows('approve_record');
    // a person (the owner's key) through the host, not an agent
    expect(row).toMatchObject({
      statusCode: 200,
      actor: 'user',
      authMethod: 'oauth_bearer',
      userId: w.owner.id,
      agentRunId: null,
    });
    const events = await call(t, 'GET', `/v1/events?type=approval.approved&roomId=${w.roomId}`, { key: w.key });
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0]).toMatchObject({ actor: 'user', data: { object: { id } } });
  });

  it('moves a task to another status and assigns it on the board, through update_task', async () => {
    const task = (
      await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, { key: w.key, body: { title: 'Ship the release' } })
    ).body as { id: string };
    const { frame } = await openView('list_tasks', { roomId: w.roomId });
    const card = `li[data-task="${task.id}"]`;
    await frame.waitForSelector(`section[data-status="todo"] ${card}`);
    await frame.selectOption(`${card} select[data-field="status"]`, 'in_progress');
    await frame.waitForSelector(`section[data-status="in_progress"] ${card}`);
    // the room's members come from list_room_members, named from its text
    await frame.waitForSelector(`${card} select[data-field="assigneeId"] option[value="${w.member.id}"]`, {
      state: 'attached',
    });
    expect(await frame.textContent(`${card} select[data-field="assigneeId"] option[value="${w.member.id}"]`)).toBe(
      'member',
    );
    await frame.selectOption(`${card} select[data-field="assigneeId"]`, w.member.id);
    await frame.waitForSelector('#status[data-kind="ok"]');

    const saved = await call(t, 'GET', `/v1/rooms/${w.roomId}/tasks/${task.id}`, { key: w.key });
    expect(saved.body).toMatchObject({ status: 'in_progress', assigneeId: w.member.id });
    const rows = await auditRows('update_task');
    expect(rows).toHaveLength(2);
    for (const r of rows)
      expect(r).toMatchObject({
        statusCode: 200,
        actor: 'user',
        authMethod: 'oauth_bearer',
        userId: w.owner.id,
        agentRunId: null,
      });
    const events = await call(t, 'GET', `/v1/events?type=task.updated&roomId=${w.roomId}`, { key: w.key });
    expect(events.body.data.filter((e: any) => e.data.object.id === task.id)).toHaveLength(2);
  });

  it('shows the conversation with hostile bodies as text, and a new message appears without reloading', async () => {
    const hostile = '<img src=x onerror="window.pwned=3"><b>bold?</b></div><script>window.pwned=4</script>';
    const posted = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: memberKey, body: { body: hostile } });
    // an attachment whose name holds markup
    const filename = '<img src=x onerror="window.pwned=6">plan.txt';
    const file = await attach(posted.body.id, filename);
    const { frame } = await openView('list_messages', { roomId: w.roomId, order: 'desc', limit: 20 });
    await frame.waitForSelector('#messages li');
    const bodies = await frame.locator('#messages li .body').allTextContents();
    expect(bodies).toContain(hostile);
    // the message's attachments (list_files through the host), by file name, as text
    const attached = `li[data-message="${posted.body.id}"] .attachments li[data-file="${file}"] .filename`;
    await frame.waitForSelector(attached);
    expect(await frame.textContent(attached)).toBe(filename);
    expect(await frame.locator('#messages img, #messages b, #messages script').count()).toBe(0);
    expect(await frame.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await frame.locator('#messages .author').first().textContent()).toBe('member');

    const fresh = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
      key: memberKey,
      body: { body: 'Posted while the view is open' },
    });
    // the view polls list_messages through the host and shows it
    await frame.waitForSelector(`li[data-message="${fresh.body.id}"]`, { timeout: 30_000 });
    expect(await frame.textContent(`li[data-message="${fresh.body.id}"] .body`)).toBe('Posted while the view is open');
    // a file attached to it afterwards follows, on a later reading of the room's files
    const late = await attach(fresh.body.id, 'minutes-final.md');
    await frame.waitForSelector(`li[data-message="${fresh.body.id}"] li[data-file="${late}"]`, { timeout: 60_000 });
    expect(await frame.textContent(`li[data-message="${fresh.body.id}"] .filename`)).toBe('minutes-final.md');

    // the owner posts from the view (create_message through the host): it shows, and svc records the owner
    await frame.fill('#compose', 'Sent from the conversation view');
    await frame.click('.compose button');
    await frame.waitForSelector('#status[data-kind="ok"]');
    await frame.waitForSelector('#messages li .body:text-is("Sent from the conversation view")');
    const [row] = await auditRows('create_message');
    expect(row).toMatchObject({
      statusCode: 201,
      actor: 'user',
      authMethod: 'oauth_bearer',
      userId: w.owner.id,
      agentRunId: null,
    });
    const listed = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?order=desc&limit=1`, { key: w.key });
    expect(listed.body.data[0]).toMatchObject({ body: 'Sent from the conversation view', authorId: w.owner.id });
    const events = await call(t, 'GET', `/v1/events?type=message.created&roomId=${w.roomId}`, { key: w.key });
    expect(events.body.data.find((e: any) => e.data.object.id === listed.body.data[0].id)).toMatchObject({
      actor: 'user',
    });
  });

  it("refuses a view's write on a read-only connection, as it refuses the model's", async () => {
    const id = await pendingRecord('Read-only review');
    const before = (await auditRows('approve_record')).length;
    const { frame, page } = await openView(
      'get_record',
      { roomId: w.roomId, recordId: id },
      { headers: { 'x-mcp-readonly': 'true' } },
    );
    await frame.waitForSelector('#title');
    await frame.click('button[data-action="approve_record"]');
    await frame.waitForSelector('#status[data-kind="error"]');
    expect(await frame.textContent('#status')).toMatch(/approve_record/);
    const calls = (await page.evaluate(() => (globalThis as any).viewCalls)) as { name: string; error?: string }[];
    // (after it the view reads the history again, which a read-only connection may)
    expect(calls.filter((c) => c.name === 'approve_record')).toEqual([
      { name: 'approve_record', error: expect.stringMatching(/approve_record/) },
    ]);
    expect((await recordOf(id)).approvalState).toBe('pending');
    expect((await auditRows('approve_record')).length).toBe(before);
  });
});
