import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSvcClient, SvcApiError, verifyWebhook, type Schemas } from '../../clients/typescript/src/index.js';
import { createConnector } from '../../src/agents/connectors.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { ALL_SCOPES, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { startReceiver } from '../webhooks/helpers.js';

// The typed client (clients/typescript) against a running server, for every operation of the served
// document. A middleware records what went over the wire, so the last test proves that none was left out.

/** `METHOD /path` of every typed-client call (`api.POST('/v1/…'`) written in the other test files. */
function typedClientCalls(): Set<string> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter(
    (f) => f.endsWith('.test.ts') && !f.endsWith('e2e.test.ts'),
  );
  const calls = new Set<string>();
  for (const f of files)
    for (const m of fs
      .readFileSync(path.join(root, f), 'utf8')
      .matchAll(/\.(GET|POST|PUT|PATCH|DELETE)\(\s*'(\/v1[^']*)'/g))
      calls.add(`${m[1]} ${m[2]}`);
  return calls;
}

describe('the TypeScript client against a running server', () => {
  it('runs every operation of the document, typed, with typed errors', { timeout: 120_000 }, async () => {
    await using t = await startTestServer();
    await using receiver = await startReceiver();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    const { webhook, secret } = await createWebhook(s, {
      roomId: w.roomId,
      url: receiver.url,
      createdById: w.owner.id,
    });
    const memberKey = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES }))
      .token;

    const called = new Set<string>();
    const record = {
      onRequest: ({ request, schemaPath }: { request: Request; schemaPath: string }) =>
        void called.add(`${request.method} ${schemaPath}`),
    };
    const svc = createSvcClient({ baseUrl: t.baseUrl, apiKey: w.key });
    const member = createSvcClient({ baseUrl: t.baseUrl, accessToken: () => memberKey });
    svc.api.use(record);
    member.api.use(record);
    const { api, unwrap } = svc;

    const me = await unwrap(api.GET('/v1/me'));
    expect(me).toMatchObject({ id: w.owner.id, organizationId: w.orgId, billingContext: 'organization' });
    expect((await unwrap(api.GET('/v1/organizations'))).data).toEqual([
      expect.objectContaining({ id: w.orgId, role: 'owner' }),
    ]);
    const members = await unwrap(
      api.GET('/v1/organizations/{organizationId}/members', { params: { path: { organizationId: w.orgId } } }),
    );
    expect(members.data.map((x) => x.userId)).toEqual([w.owner.id, w.member.id]);

    const room: Schemas['Room'] = await unwrap(api.POST('/v1/rooms', { body: { name: 'Client room' } }));
    expect(room.name).toBe('Client room');
    expect((await unwrap(api.GET('/v1/rooms/{roomId}', { params: { path: { roomId: room.id } } }))).id).toBe(room.id);
    expect(
      (
        await unwrap(
          api.PATCH('/v1/rooms/{roomId}', { params: { path: { roomId: room.id } }, body: { name: 'Renamed' } }),
        )
      ).name,
    ).toBe('Renamed');
    expect((await unwrap(api.GET('/v1/rooms', { params: { query: { limit: 200 } } }))).data.map((r) => r.id)).toContain(
      room.id,
    );
    await unwrap(
      api.POST('/v1/rooms/{roomId}/members', { params: { path: { roomId: room.id } }, body: { userId: w.member.id } }),
    );
    expect(
      (await unwrap(api.GET('/v1/rooms/{roomId}/members', { params: { path: { roomId: room.id } } }))).data.map(
        (m) => m.userId,
      ),
    ).toContain(w.member.id);

    // messages, and the cursor iterator over more than one page
    for (const body of ['one', 'two', 'three'])
      await unwrap(api.POST('/v1/rooms/{roomId}/messages', { params: { path: { roomId: w.roomId } }, body: { body } }));
    const bodies: string[] = [];
    for await (const m of svc.paginate('/v1/rooms/{roomId}/messages', {
      path: { roomId: w.roomId },
      query: { limit: 2 },
    }))
      bodies.push(m.body);
    expect(bodies).toEqual(['one', 'two', 'three']);
    const message = (await unwrap(api.GET('/v1/rooms/{roomId}/messages', { params: { path: { roomId: w.roomId } } })))
      .data[0];

    const task = await unwrap(
      api.POST('/v1/rooms/{roomId}/tasks', {
        params: { path: { roomId: w.roomId } },
        body: { title: 'Ship', dueDate: '2026-12-05' },
      }),
    );
    expect(
      await unwrap(
        api.GET('/v1/rooms/{roomId}/tasks/{taskId}', { params: { path: { roomId: w.roomId, taskId: task.id } } }),
      ),
    ).toEqual(task);
    expect(
      (
        await unwrap(
          api.PATCH('/v1/rooms/{roomId}/tasks/{taskId}', {
            params: { path: { roomId: w.roomId, taskId: task.id } },
            body: { status: 'done' },
          }),
        )
      ).status,
    ).toBe('done');
    expect(
      (await unwrap(api.GET('/v1/rooms/{roomId}/tasks', { params: { path: { roomId: w.roomId } } }))).data,
    ).toHaveLength(1);

    // a business rule answers the typed error with its own code
    const broken = await api.PATCH('/v1/rooms/{roomId}/tasks/{taskId}', {
      params: { path: { roomId: w.roomId, taskId: task.id } },
      body: { startDate: '2026-12-31' },
    });
    const ruleError = await unwrap(Promise.resolve(broken)).catch((e: unknown) => e);
    expect(ruleError).toBeInstanceOf(SvcApiError);
    expect(ruleError).toMatchObject({
      status: 400,
      code: 'rule_violation',
      requestId: broken.response.headers.get('x-request-id'),
    });

    // records and the approval flow: requested by the owner, approved by the member; a second pair rejected and
    // withdrawn
    const recPath = (recordId: string) => ({ params: { path: { roomId: w.roomId, recordId } } });
    const rec = await unwrap(
      api.POST('/v1/rooms/{roomId}/records', {
        params: { path: { roomId: w.roomId } },
        body: { title: 'Weekly', body: 'Notes' },
      }),
    );
    expect((await unwrap(api.GET('/v1/rooms/{roomId}/records/{recordId}', recPath(rec.id)))).title).toBe('Weekly');
    expect(
      (
        await unwrap(
          api.PATCH('/v1/rooms/{roomId}/records/{recordId}', { ...recPath(rec.id), body: { body: 'More notes' } }),
        )
      ).body,
    ).toBe('More notes');
    expect(
      (await unwrap(api.GET('/v1/rooms/{roomId}/records', { params: { path: { roomId: w.roomId } } }))).data,
    ).toHaveLength(1);
    expect(
      (await unwrap(api.POST('/v1/rooms/{roomId}/records/{recordId}/approval/request', recPath(rec.id)))).approval
        .status,
    ).toBe('pending');
    expect(
      (
        await unwrap(
          member.api.POST('/v1/rooms/{roomId}/records/{recordId}/approval/approve', {
            ...recPath(rec.id),
            body: { comment: 'ok' },
          }),
        )
      ).record.approvalState,
    ).toBe('approved');
    await unwrap(api.POST('/v1/rooms/{roomId}/records/{recordId}/approval/request', recPath(rec.id)));
    expect(
      (await unwrap(member.api.POST('/v1/rooms/{roomId}/records/{recordId}/approval/reject', recPath(rec.id)))).approval
        .status,
    ).toBe('rejected');
    await unwrap(api.POST('/v1/rooms/{roomId}/records/{recordId}/approval/request', recPath(rec.id)));
    expect(
      (await unwrap(api.POST('/v1/rooms/{roomId}/records/{recordId}/approval/withdraw', recPath(rec.id)))).approval
        .status,
    ).toBe('withdrawn');
    const history = await unwrap(api.GET('/v1/rooms/{roomId}/records/{recordId}/approvals', recPath(rec.id)));
    expect(history.data.map((a) => a.status)).toEqual(['approved', 'rejected', 'withdrawn']);
    expect(await unwrap(api.DELETE('/v1/rooms/{roomId}/records/{recordId}', recPath(rec.id)))).toEqual({
      id: rec.id,
      deleted: true,
    });
    const gone = await api.GET('/v1/rooms/{roomId}/records/{recordId}', recPath(rec.id));
    expect(gone.error?.error.code).toBe('not_found');

    // files: a Uint8Array and a Blob go up without a cast; the stored type comes back down
    const bytes = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0, 255]);
    const file = await svc.uploadFile(w.roomId, bytes, {
      filename: 'minutes.pdf',
      contentType: 'application/pdf',
      messageId: message.id,
    });
    expect(file).toMatchObject({
      filename: 'minutes.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      messageId: message.id,
    });
    const blobFile = await svc.uploadFile(w.roomId, new Blob(['hello'], { type: 'text/plain' }), {
      filename: 'hello.txt',
      contentType: 'text/plain',
      taskId: task.id,
    });
    expect(blobFile.size).toBe(5);
    expect(
      await unwrap(
        api.GET('/v1/rooms/{roomId}/files/{fileId}', { params: { path: { roomId: w.roomId, fileId: file.id } } }),
      ),
    ).toEqual(file);
    expect(
      (await unwrap(api.GET('/v1/rooms/{roomId}/files', { params: { path: { roomId: w.roomId } } }))).data.map(
        (f) => f.id,
      ),
    ).toContain(file.id);
    const down = await svc.downloadFile(w.roomId, file.id);
    expect(down).toEqual({ bytes, contentType: 'application/pdf' });

    // events
    expect((await unwrap(api.GET('/v1/event-types'))).data.map((e) => e.type)).toContain('message.created');
    const events = [];
    for await (const e of svc.paginate('/v1/events', { query: { roomId: w.roomId, type: 'message.created' } }))
      events.push(e);
    expect(events).toHaveLength(3);

    // webhooks: list, history (pending: the worker is off here), redeliver now, and verify what the receiver got
    const hooks = await unwrap(api.GET('/v1/rooms/{roomId}/webhooks', { params: { path: { roomId: w.roomId } } }));
    expect(hooks.data.map((h) => h.id)).toEqual([webhook.id]);
    const hookPath = { roomId: w.roomId, webhookId: webhook.id };
    const deliveries = await unwrap(
      api.GET('/v1/rooms/{roomId}/webhooks/{webhookId}/deliveries', {
        params: { path: hookPath, query: { limit: 1 } },
      }),
    );
    const { delivery } = await unwrap(
      api.POST('/v1/rooms/{roomId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', {
        params: { path: { ...hookPath, deliveryId: deliveries.data[0].id } },
      }),
    );
    expect(delivery).toMatchObject({ success: true, statusCode: 200, eventId: deliveries.data[0].eventId });
    const got = receiver.requests.at(-1)!;
    expect(verifyWebhook({ rawBody: got.body, headers: got.headers, secrets: [secret] })).toMatchObject({
      ok: true,
      eventId: delivery.eventId,
    });
    expect(verifyWebhook({ rawBody: got.body, headers: got.headers, secrets: ['whsec_wrong'] }).ok).toBe(false);
    // the Svc-Webhook-Delivery UUID in place of the history id: the typed 404 naming the id the path takes
    const byUuid = await api.POST('/v1/rooms/{roomId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', {
      params: { path: { ...hookPath, deliveryId: delivery.deliveryId } },
    });
    expect(byUuid.response.status).toBe(404);
    expect(byUuid.error?.error).toMatchObject({ code: 'not_found', message: expect.stringMatching(/whd_/) });
    // a test event, sent now through the real sender and signed like any delivery
    const tested = await unwrap(
      api.POST('/v1/rooms/{roomId}/webhooks/{webhookId}/test', { params: { path: hookPath } }),
    );
    expect(tested.outcome).toMatchObject({ success: true, statusCode: 200, errorClass: null });
    expect(tested.delivery).toMatchObject({ success: true, eventType: 'webhook.test' });
    const testGot = receiver.requests.at(-1)!;
    expect(verifyWebhook({ rawBody: testGot.body, headers: testGot.headers, secrets: [secret] })).toMatchObject({
      ok: true,
      eventId: tested.delivery.eventId,
    });
    // recover: nothing finally failed in the last hour (the history's deliveries are pending or succeeded)
    const recovered = await unwrap(
      api.POST('/v1/rooms/{roomId}/webhooks/{webhookId}/recover', {
        params: { path: hookPath },
        body: { since: new Date(Date.now() - 3_600_000).toISOString() },
      }),
    );
    expect(recovered).toEqual({ queued: 0 });

    // search across the rooms the caller can read, typed hits
    const hits = await unwrap(api.GET('/v1/search', { params: { query: { q: 'two' } } }));
    expect(hits.data).toEqual([
      expect.objectContaining({ type: 'message', roomId: w.roomId, message: expect.objectContaining({ body: 'two' }) }),
    ]);
    const taskHits: Schemas['SearchHit'][] = (
      await unwrap(api.GET('/v1/search', { params: { query: { q: 'ship', types: 'tasks' } } }))
    ).data;
    expect(taskHits.map((h) => h.task?.id)).toEqual([task.id]);

    // agent runs: a connector of the organization, a run queued, listed, read and canceled (no worker runs
    // in this server, so it stays queued until then); completing is the connector's own, with its run's MCP token
    const { connector } = await createConnector(s, {
      organizationId: w.orgId,
      name: 'Client connector',
      url: receiver.url,
      scopes: ['mcp:tools', 'tasks:write'],
    });
    const runsPath = { params: { path: { roomId: w.roomId } } };
    const invoker = createSvcClient({
      baseUrl: t.baseUrl,
      apiKey: (
        await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
      ).token,
    });
    invoker.api.use(record);
    expect((await unwrap(invoker.api.GET('/v1/connectors'))).data).toEqual([
      expect.objectContaining({ id: connector.id, scopes: ['mcp:tools', 'tasks:write'] }),
    ]);
    const run = await unwrap(
      invoker.api.POST('/v1/rooms/{roomId}/agent-runs', {
        ...runsPath,
        body: { connectorId: connector.id, input: { text: 'one\ntwo' } },
      }),
    );
    expect(run).toMatchObject({ status: 'queued', connectorId: connector.id });
    expect((await unwrap(invoker.api.GET('/v1/rooms/{roomId}/agent-runs', runsPath))).data.map((r) => r.id)).toEqual([
      run.id,
    ]);
    const runPath = { params: { path: { roomId: w.roomId, runId: run.id } } };
    expect((await unwrap(invoker.api.GET('/v1/rooms/{roomId}/agent-runs/{runId}', runPath))).id).toBe(run.id);
    expect((await unwrap(invoker.api.POST('/v1/rooms/{roomId}/agent-runs/{runId}/cancel', runPath))).status).toBe(
      'canceled',
    );
    const completed = await invoker.api.POST('/v1/rooms/{roomId}/agent-runs/{runId}/complete', {
      ...runPath,
      body: { status: 'succeeded' },
    });
    expect(completed.response.status).toBe(403);
    expect(completed.error?.error.code).toBe('forbidden');

    // every operation of the served document went through the client, here or in another test through the typed
    // client (an operation's own tests, beside its module) (but the event stream: server-sent events, read by
    // `svc listen` and test/rest/eventStream.test.ts)
    const doc = (await (await t.fetch('/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses?: Record<string, { content?: object }> }>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !('text/event-stream' in (op.responses?.['200']?.content ?? {})))
        .map(([m]) => `${m.toUpperCase()} ${p}`),
    );
    expect(operations).toEqual(expect.arrayContaining([...called]));
    const elsewhere = typedClientCalls();
    expect(operations.filter((o) => !called.has(o) && !elsewhere.has(o))).toEqual([]);
  });

  it('sends an Idempotency-Key on every write (the same one on a retry) and none on reads', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const seen: { method: string; key: string | null }[] = [];
    const svc = createSvcClient({
      baseUrl: t.baseUrl,
      apiKey: w.key,
      fetch: (r) => {
        seen.push({ method: r.method, key: r.headers.get('idempotency-key') });
        return fetch(r);
      },
    });
    const first = await svc.api.POST('/v1/rooms/{roomId}/messages', {
      params: { path: { roomId: w.roomId } },
      body: { body: 'once' },
    });
    await svc.unwrap(svc.api.GET('/v1/me'));
    expect(seen[0].method).toBe('POST');
    expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toEqual({ method: 'GET', key: null });
    // a key given by the caller is kept: the same write twice replays the first answer
    const again = await svc.api.POST('/v1/rooms/{roomId}/messages', {
      params: { path: { roomId: w.roomId }, header: { 'Idempotency-Key': 'fixed-1' } },
      body: { body: 'twice' },
    });
    const replay = await svc.api.POST('/v1/rooms/{roomId}/messages', {
      params: { path: { roomId: w.roomId }, header: { 'Idempotency-Key': 'fixed-1' } },
      body: { body: 'twice' },
    });
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data).toEqual(again.data);
    expect(first.data?.body).toBe('once');
  });

  it('retries 429 rate_limited after Retry-After, a bounded number of times, then throws the typed error', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '1' } });
    const w = await createWorld(t.rt);
    const waits: number[] = [];
    let attempts = 0;
    const svc = createSvcClient({
      baseUrl: t.baseUrl,
      apiKey: w.key,
      fetch: (r) => {
        attempts++;
        return fetch(r);
      },
      retry: { maxAttempts: 3, sleep: async (ms) => void waits.push(ms) },
    });
    await svc.unwrap(svc.api.GET('/v1/me'));
    attempts = 0;
    const err = await svc.unwrap(svc.api.GET('/v1/me')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcApiError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(attempts).toBe(3);
    expect(waits).toHaveLength(2);
    for (const ms of waits) expect(ms).toBeGreaterThan(0);
  });
});
