import { describe, expect, it } from 'vitest';
import { call, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { addWebhook, startReceiver } from '../webhooks/helpers.js';

// /metrics in the Prometheus text format, behind SVC_METRICS_TOKEN, with bounded labels.

const TOKEN = 'metrics-token-0123456789abcdef';
const METRICS_ENV = { SVC_METRICS_TOKEN: TOKEN, SVC_INSTANCE_ID: 'web-1' };

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (label values here never hold quotes or commas). */
function parse(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      return { name: m[1], labels, value: Number(m[3]) };
    });
}

/** The value of the one sample of `name` whose labels include `labels` (undefined when there is none). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

async function scrape(t: TestServer): Promise<{ text: string; samples: Sample[] }> {
  const res = await t.fetch('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parse(text) };
}

describe('metrics: /metrics', () => {
  it('is an unknown path (404) when SVC_METRICS_TOKEN is unset', async () => {
    await using t = await startTestServer();
    const res = await t.fetch('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toMatch(/svc_|process_cpu/);
  });

  it('a scrape without the token, with a wrong one or another scheme gets a bare 401 that reveals nothing', async () => {
    await using t = await startTestServer({ env: METRICS_ENV });
    const w = await createWorld(t.rt);
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789abcdef',
      `Bearer ${TOKEN}x`,
      `Basic ${TOKEN}`,
      TOKEN,
      `Bearer ${w.key}`,
    ]) {
      const res = await t.fetch('/metrics', { headers: authorization ? { authorization } : {} });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = await res.text();
      expect(body).toBe('Unauthorized\n');
    }
    expect((await t.fetch('/metrics', { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('counts requests by surface, operation (route template or tool) and status class, refusals by reason, units, with no id, email or secret', async () => {
    await using t = await startTestServer({ env: METRICS_ENV });
    const w = await createWorld(t.rt);
    const readOnly = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['me:read', 'rooms:read'],
    });

    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    expect(
      (await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hello' } })).status,
    ).toBe(201);
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).status).toBe(200);
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}`, { key: w.key })).status).toBe(200);
    expect((await call(t, 'GET', '/v1/me')).status).toBe(401);
    expect((await call(t, 'GET', '/v1/me', { key: 'svc_test_not-a-real-key' })).status).toBe(401);
    expect((await call(t, 'POST', '/v1/rooms', { key: readOnly.token, body: { name: 'x' } })).status).toBe(403);
    expect((await call(t, 'GET', `/v1/no/such/${w.roomId}`, { key: w.key })).status).toBe(404);
    expect((await postMcp(t, toolCall('get_me'), { token: w.key })).status).toBe(200);
    expect((await postMcp(t, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { token: w.key })).status).toBe(200);
    expect((await postMcp(t, toolCall('get_me'))).status).toBe(401);
    expect((await t.fetch('/.well-known/oauth-authorization-server')).status).toBe(200);
    const token = await t.fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=nope',
    });
    expect(token.status).toBeGreaterThanOrEqual(400);
    expect((await t.fetch('/login')).status).toBe(200);
    expect((await t.fetch(`/login/${w.owner.id}`)).status).toBe(404);
    expect((await t.fetch('/healthz')).status).toBe(200);

    const { text, samples } = await scrape(t);
    const req = (surface: string, operation: string, status_class: string) =>
      value(samples, 'svc_requests_total', { surface, operation, status_class });
    expect(req('rest', 'GET /v1/me', '2xx')).toBe(2);
    expect(req('rest', 'GET /v1/me', '4xx')).toBe(2);
    expect(req('rest', 'POST /v1/rooms/{roomId}/messages', '2xx')).toBe(1);
    expect(req('rest', 'GET /v1/rooms/{roomId}/messages', '2xx')).toBe(1);
    expect(req('rest', 'GET /v1/rooms/{roomId}', '2xx')).toBe(1);
    expect(req('rest', 'POST /v1/rooms', '4xx')).toBe(1);
    expect(req('rest', 'unmatched', '4xx')).toBe(1);
    expect(req('mcp', 'get_me', '2xx')).toBe(1);
    expect(req('mcp', 'tools/list', '2xx')).toBe(1);
    expect(req('mcp', 'POST /mcp', '4xx')).toBe(1);
    expect(req('oauth', 'GET /.well-known/oauth-authorization-server', '2xx')).toBe(1);
    expect(req('oauth', 'POST /oauth/token', '4xx')).toBe(1);
    expect(req('pages', 'GET /login', '2xx')).toBe(1);
    expect(req('pages', 'unmatched', '4xx')).toBe(1);
    // the latency histogram has the same labels; operator endpoints are not counted
    expect(
      value(samples, 'svc_request_duration_seconds_count', {
        surface: 'rest',
        operation: 'GET /v1/me',
        status_class: '2xx',
      }),
    ).toBe(2);
    expect(
      value(samples, 'svc_request_duration_seconds_bucket', {
        surface: 'rest',
        operation: 'GET /v1/me',
        status_class: '2xx',
        le: '+Inf',
      }),
    ).toBe(2);
    expect(
      samples.some((s) => s.labels.operation?.includes('healthz') || s.labels.operation?.includes('metrics')),
    ).toBe(false);

    expect(value(samples, 'svc_refusals_total', { surface: 'rest', reason: 'unauthorized' })).toBe(2);
    expect(value(samples, 'svc_refusals_total', { surface: 'rest', reason: 'insufficient_scope' })).toBe(1);
    expect(value(samples, 'svc_refusals_total', { surface: 'mcp', reason: 'unauthorized' })).toBe(1);
    // GET /v1/me x2 (1 each), the message (2), the listing (1), the room (1); get_me (1); refusals cost nothing
    expect(value(samples, 'svc_api_units_charged_total', { surface: 'rest' })).toBe(6);
    expect(value(samples, 'svc_api_units_charged_total', { surface: 'mcp' })).toBe(1);

    // every series carries the process label; Node's own metrics are there
    expect(samples.every((s) => s.labels.instance_id === 'web-1')).toBe(true);
    expect(value(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    if (t.rt.ds.options.type === 'postgres') {
      expect(value(samples, 'svc_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
      expect(value(samples, 'svc_db_pool_waiting')).toBeGreaterThanOrEqual(0);
    }

    // bounded labels: no id, email or secret anywhere
    for (const leak of [
      w.key,
      readOnly.token,
      TOKEN,
      w.owner.email,
      w.member.email,
      w.orgId,
      w.roomId,
      w.owner.id,
      w.keyId,
      readOnly.id,
    ]) {
      expect(text).not.toContain(leak);
    }
    expect(text).not.toMatch(
      /\b(?:usr|org|room|key|msg|req|aud|evt|whd|wh)_[0-9A-Za-z]{10,}|svc_(?:test|live|at|rt)_|@/,
    );
  });

  it('counts rate_limited and api_units_exhausted refusals', async () => {
    await using t = await startTestServer({ env: { ...METRICS_ENV, SVC_RATE_LIMIT: '4', SVC_MONTHLY_UNITS: '2' } });
    const w = await createWorld(t.rt);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(t, 'GET', '/v1/me', { key: w.key })).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    const { samples } = await scrape(t);
    expect(value(samples, 'svc_refusals_total', { surface: 'rest', reason: 'api_units_exhausted' })).toBe(2);
    expect(value(samples, 'svc_refusals_total', { surface: 'rest', reason: 'rate_limited' })).toBe(2);
    expect(value(samples, 'svc_api_units_charged_total', { surface: 'rest' })).toBe(2);
    expect(
      value(samples, 'svc_requests_total', { surface: 'rest', operation: 'GET /v1/me', status_class: '4xx' }),
    ).toBe(4);
  });

  it('webhooks: the outbox backlog at scrape time, attempts by outcome, commit-to-receipt latency', async () => {
    await using receiver = await startReceiver([{ status: 503 }]);
    await using t = await startTestServer({ env: { ...METRICS_ENV, SVC_WEBHOOK_BACKOFF_BASE_MS: '1' } });
    const w = await createWorld(t.rt);
    await addWebhook(t.rt, w.roomId, receiver.url);
    await addWebhook(t.rt, w.roomId, receiver.url.replace('/hook', '/other'));

    let { samples } = await scrape(t);
    expect(value(samples, 'svc_webhook_backlog_pending')).toBe(0);
    expect(value(samples, 'svc_webhook_backlog_oldest_age_seconds')).toBe(0);

    expect((await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hi' } })).status).toBe(
      201,
    );
    ({ samples } = await scrape(t));
    expect(value(samples, 'svc_webhook_backlog_pending')).toBe(2);
    expect(value(samples, 'svc_webhook_backlog_oldest_age_seconds')).toBeGreaterThanOrEqual(0);

    // first round: one receiver answers 503 (retried later), the other 200
    const worker = createWebhookWorker({ services: t.rt.services });
    expect(await worker.runOnce()).toBe(2);
    ({ samples } = await scrape(t));
    expect(value(samples, 'svc_webhook_attempts_total', { outcome: 'succeeded' })).toBe(1);
    expect(value(samples, 'svc_webhook_attempts_total', { outcome: 'retrying' })).toBe(1);
    expect(value(samples, 'svc_webhook_backlog_pending')).toBe(1);
    expect(value(samples, 'svc_webhook_commit_to_receipt_seconds_count')).toBe(1);

    // the retry succeeds (poll until its backoff has passed: no sleeping on a fixed time)
    while ((await worker.runOnce()) === 0) await new Promise((r) => setTimeout(r, 5));
    await worker.stop();
    ({ samples } = await scrape(t));
    expect(value(samples, 'svc_webhook_attempts_total', { outcome: 'succeeded' })).toBe(2);
    expect(value(samples, 'svc_webhook_backlog_pending')).toBe(0);
    expect(value(samples, 'svc_webhook_commit_to_receipt_seconds_count')).toBe(2);
  });
});
