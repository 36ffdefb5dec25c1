import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookAttempt } from '../../db/entities/index.js';
import { createWorld, issueKey, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { addWebhook, startReceiver, type Receiver } from './helpers.js';
import { freePort, waitFor } from './processes.js';

// Webhook debugging on the command line: `svc webhook test`, `svc webhook purge-attempts`, and
// `svc listen` / `svc trigger`, which talk to a server through the public API only (never its database).

const ROOT = path.resolve(import.meta.dirname, '../..');
const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc …` to its end. Remote commands get no DATABASE_URL at all: they must not need one. */
function run(args: string[], env: Record<string, string> = BASE_ENV): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/svc.mjs', ...args], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `svc listen …` in the background, with its output as it comes. */
function spawnListen(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, ['bin/svc.mjs', 'listen', ...args], {
    cwd: ROOT,
    env: BASE_ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe('svc listen and svc trigger against a server', { timeout: 120_000 }, () => {
  let t: TestServer;
  let w: World;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startTestServer();
    w = await createWorld(t.rt);
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('forwards the events it follows, signed with the secret it prints, one line per result; trigger fires them through the API', async () => {
    const l = spawnListen([
      '--url',
      t.baseUrl,
      '--key',
      w.key,
      '--room',
      w.roomId,
      '--forward-to',
      rx.url,
      '--events',
      'record.created,message.*',
      '--interval-ms',
      '100',
      '--max-events',
      '2',
    ]);
    await waitFor(() => /Signing secret: whsec_\S+/.test(l.out()) || l.child.exitCode !== null, 'listen to start');
    const secret = /Signing secret: (whsec_\S+)/.exec(l.out())![1];

    const auth = ['--url', t.baseUrl, '--key', w.key, '--room', w.roomId, '--json'];
    const task = await run(['trigger', 'task.created', ...auth]);
    expect(task.code, task.stderr).toBe(0);
    const rec = await run(['trigger', 'record.created', ...auth]);
    expect(rec.code, rec.stderr).toBe(0);
    const recOut = JSON.parse(rec.stdout);
    expect(recOut).toMatchObject({ eventType: 'record.created', roomId: w.roomId, object: { type: 'record' } });
    expect(recOut.object.id).toMatch(/^rec_/);
    const msg = await run(['trigger', 'message.created', ...auth]);
    expect(msg.code, msg.stderr).toBe(0);

    expect(await l.exited).toBe(0);
    // task.created is filtered out by --events; the other two are forwarded in order
    expect(rx.requests.map((r) => r.headers['svc-webhook-type'])).toEqual(['record.created', 'message.created']);
    const log = await fetch(`${t.baseUrl}/v1/events?roomId=${w.roomId}`, {
      headers: { authorization: `Bearer ${w.key}` },
    }).then((r) => r.json() as Promise<any>);
    for (const req of rx.requests) {
      expect(verifyWebhook({ rawBody: req.body, headers: req.headers, secrets: [secret] })).toMatchObject({ ok: true });
      expect(req.headers['svc-webhook-api-version']).toBe('2026-06-09');
      expect(req.headers['user-agent']).toBe('Svc-Webhook/2.0');
      const body = JSON.parse(req.body.toString());
      const logged = log.data.find((e: any) => e.id === req.headers['svc-webhook-id']);
      expect(logged).toBeTruthy();
      expect(body).toEqual({
        id: logged.id,
        type: logged.type,
        apiVersion: '2026-06-09',
        createdAt: logged.createdAt,
        organizationId: w.orgId,
        roomId: w.roomId,
        data: logged.data,
      });
    }
    expect(JSON.parse(rx.requests[0].body.toString()).data.object.id).toBe(recOut.object.id);
    const lines = l
      .out()
      .split('\n')
      .filter((x) => x.includes(' -> '));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/record\.created\s+evt_\S+\s+-> 200 ok \(\d+ ms\)/);
    expect(lines[1]).toMatch(/message\.created/);
  });

  it('shows a receiver that is down on its line, and keeps going', async () => {
    const port = await freePort();
    const l = spawnListen([
      '--url',
      t.baseUrl,
      '--key',
      w.key,
      '--room',
      w.roomId,
      '--forward-to',
      `http://127.0.0.1:${port}/hook`,
      '--interval-ms',
      '100',
      '--max-events',
      '1',
      '--json',
    ]);
    await waitFor(() => /Signing secret/.test(l.err()) || l.child.exitCode !== null, 'listen to start');
    expect((await run(['trigger', 'task.updated', '--url', t.baseUrl, '--key', w.key, '--room', w.roomId])).code).toBe(
      0,
    );
    expect(await l.exited).toBe(0);
    const out = JSON.parse(l.out());
    expect(out.secret).toMatch(/^whsec_/);
    expect(out.forwarded).toHaveLength(1);
    expect(out.forwarded[0]).toMatchObject({
      type: 'task.created',
      statusCode: null,
      errorClass: 'connection_refused',
    });
    expect(l.err()).toMatch(/task\.created\s+evt_\S+\s+-> failed: connection_refused/);
  });

  it('stops on SIGINT with exit code 0', async () => {
    const l = spawnListen(['--url', t.baseUrl, '--key', w.key, '--forward-to', rx.url, '--interval-ms', '100']);
    await waitFor(() => /Signing secret/.test(l.out()) || l.child.exitCode !== null, 'listen to start');
    l.child.kill('SIGINT');
    expect(await l.exited).toBe(0);
    expect(l.out()).toMatch(/forwarded: 0/);
  });

  it('fails with one clear line and exit code 1 on an unreachable server or a key without events:read', async () => {
    const port = await freePort();
    const down = await run(['listen', '--url', `http://127.0.0.1:${port}`, '--key', w.key, '--forward-to', rx.url]);
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`));

    const narrow = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['records:write'] });
    const scope = await run(['listen', '--url', t.baseUrl, '--key', narrow.token, '--forward-to', rx.url]);
    expect(scope.code).toBe(1);
    expect(scope.stderr.trim().split('\n')).toHaveLength(1);
    expect(scope.stderr).toMatch(/^error: the API key lacks the scope events:read/);

    const badKey = await run(['listen', '--url', t.baseUrl, '--key', 'svc_test_not-a-key', '--forward-to', rx.url]);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/^error: the API key was refused \(401/);

    const noKey = await run(['listen', '--url', t.baseUrl, '--forward-to', rx.url]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/API key is required/);
    const noForward = await run(['listen', '--url', t.baseUrl, '--key', w.key]);
    expect(noForward.code).toBe(2);
    expect(noForward.stderr).toMatch(/--forward-to is required/);
  });

  it('trigger: covers the documented types, refuses the others clearly, and reports API refusals', async () => {
    const auth = ['--url', t.baseUrl, '--key', w.key, '--room', w.roomId, '--json'];
    for (const type of [
      'record.updated',
      'record.deleted',
      'approval.requested',
      'approval.withdrawn',
      'message.unpinned',
    ]) {
      const r = await run(['trigger', type, ...auth]);
      expect(r.code, `${type}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout).eventType).toBe(type);
    }
    const log = await fetch(`${t.baseUrl}/v1/events?roomId=${w.roomId}&limit=200`, {
      headers: { authorization: `Bearer ${w.key}` },
    }).then((r) => r.json() as Promise<any>);
    const types = new Set(log.data.map((e: any) => e.type));
    for (const type of [
      'record.updated',
      'record.deleted',
      'approval.requested',
      'record.approval_requested',
      'approval.withdrawn',
      'message.pinned',
      'message.unpinned',
    ])
      expect(types).toContain(type);

    const approve = await run(['trigger', 'approval.approved', ...auth]);
    expect(approve.code).toBe(2);
    expect(approve.stderr).toMatch(/cannot be triggered here: approving needs a room member other than the requester/);
    const unknown = await run(['trigger', 'nothing.happened', ...auth]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /unknown event type "nothing\.happened"; supported: record\.created, record\.updated/,
    );
    const dm = await run(['trigger', 'message.created', '--url', t.baseUrl, '--key', w.key, '--room', w.dmRoomId]);
    expect(dm.code).toBe(1);
    expect(dm.stderr).toMatch(/^error: POST \/v1\/rooms\/room_\w+\/messages answered 404 room_not_found/);
  });
});

describe('svc webhook test and svc webhook purge-attempts', { timeout: 120_000 }, () => {
  it('sends a test event and prints the outcome; purges attempt records and prints {"deleted":N}', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([{ status: 202 }]);
    const hook = await addWebhook(t.rt, w.roomId, rx.url);
    const env = { ...BASE_ENV, ...t.env };
    const r = await run(['webhook', 'test', '--id', hook.id, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ eventType: 'webhook.test', success: true, statusCode: 202, errorClass: null });
    expect(out.id).toMatch(/^whd_/);
    expect(rx.requests[0].headers['svc-webhook-test']).toBe('true');
    expect(
      verifyWebhook({ rawBody: rx.requests[0].body, headers: rx.requests[0].headers, secrets: [hook.secret] }).ok,
    ).toBe(true);

    const kept = await run(['webhook', 'purge-attempts', '--json'], env);
    expect(JSON.parse(kept.stdout)).toEqual({ deleted: 0 });
    const purged = await run(['webhook', 'purge-attempts', '--before', '2100-01-01T00:00:00Z', '--json'], env);
    expect(JSON.parse(purged.stdout)).toEqual({ deleted: 1 });
    expect(await t.rt.ds.getRepository(WebhookAttempt).count()).toBe(0);
    const bad = await run(['webhook', 'purge-attempts', '--before', 'yesterday', '--json'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--before must be an ISO 8601 time/);

    await run(['webhook', 'deactivate', '--id', hook.id], env);
    const inactive = await run(['webhook', 'test', '--id', hook.id, '--json'], env);
    expect(inactive.code).toBe(1);
    expect(inactive.stdout).toBe('');
    expect(inactive.stderr).toMatch(/^error: webhook_inactive: /);
    expect(rx.requests).toHaveLength(1);
  });
});
