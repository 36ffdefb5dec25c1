import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { disableTracing, enableTracing } from '../../src/observability/tracing.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { addWebhook, startReceiver } from '../webhooks/helpers.js';

// OpenTelemetry traces, one span per request (operation, surface, actor kind, status, request id),
// child spans for database transactions and webhook attempts; proven in-process with an in-memory exporter.

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  enableTracing(provider.getTracer('svc'));
});
afterAll(async () => {
  disableTracing();
  await provider.shutdown();
  context.disable();
  propagation.disable();
});
beforeEach(() => exporter.reset());

/** Waits until a span matching `pred` was exported (a request's span ends just after its answer is sent). */
async function spanWhere(pred: (s: ReadableSpan) => boolean): Promise<ReadableSpan> {
  for (;;) {
    const found = exporter.getFinishedSpans().find(pred);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('tracing: OpenTelemetry spans', () => {
  it('is off by default and on with the standard OTEL_* variables', () => {
    const base = { NODE_ENV: 'test' };
    expect(loadConfig(base).tracing).toBe(false);
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBe(true);
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing).toBe(
      true,
    );
    expect(loadConfig({ ...base, OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toBe(true);
    expect(
      loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing,
    ).toBe(false);
    expect(
      loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })
        .tracing,
    ).toBe(false);
  });

  it("names each request's own span when many arrive together (rows written in one group commit after reads)", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ids = Array.from({ length: 8 }, (_, i) => i);
    const traceOf = (i: number) => `4bf92f3577b34da6a3ce929d0e0e47${String(i).padStart(2, '0')}`;
    const answers = await Promise.all(
      ids.map((i) =>
        call(t, 'GET', i % 2 ? '/v1/me' : `/v1/rooms/${w.roomId}/messages`, {
          key: w.key,
          headers: { 'x-request-id': `together-${i}`, traceparent: `00-${traceOf(i)}-b7ad6b7169203331-01` },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 200));
    for (const i of ids) {
      const span = await spanWhere((s) => s.kind === SpanKind.SERVER && s.spanContext().traceId === traceOf(i));
      expect(span.attributes['svc.request_id']).toBe(`together-${i}`);
    }
  });

  it('one server span per request with operation, surface, actor kind, status and request id; a child span per transaction', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);

    expect((await call(t, 'GET', '/v1/me', { key: w.key, headers: { 'x-request-id': 'trace-me-1' } })).status).toBe(
      200,
    );
    const me = await spanWhere((s) => s.attributes['svc.request_id'] === 'trace-me-1' && s.kind === SpanKind.SERVER);
    expect(me.name).toBe('GET /v1/me');
    expect(me.attributes).toMatchObject({
      'svc.surface': 'rest',
      'svc.operation': 'GET /v1/me',
      'svc.actor': 'app',
      'http.response.status_code': 200,
      'http.request.method': 'GET',
    });

    // a caller's trace context is continued
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const posted = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
      key: w.key,
      body: { body: 'traced' },
      headers: { 'x-request-id': 'trace-post-1', traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    expect(posted.status).toBe(201);
    const post = await spanWhere((s) => s.attributes['svc.request_id'] === 'trace-post-1');
    expect(post.name).toBe('POST /v1/rooms/{roomId}/messages');
    expect(post.spanContext().traceId).toBe(traceId);
    expect(post.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    const tx = exporter
      .getFinishedSpans()
      .filter((s) => s.name === 'db.transaction' && s.parentSpanContext?.spanId === post.spanContext().spanId);
    expect(tx.length).toBeGreaterThanOrEqual(1);
    expect(tx[0].attributes['db.system.name']).toBe(t.rt.ds.options.type === 'postgres' ? 'postgresql' : 'sqlite');

    const refused = await call(t, 'GET', '/v1/me', { headers: { 'x-request-id': 'trace-401' } });
    expect(refused.status).toBe(401);
    const anon = await spanWhere((s) => s.attributes['svc.request_id'] === 'trace-401');
    expect(anon.attributes).toMatchObject({ 'svc.actor': 'anonymous', 'http.response.status_code': 401 });

    expect(
      (await postMcp(t, toolCall('get_me'), { token: w.key, headers: { 'x-request-id': 'trace-mcp-1' } })).status,
    ).toBe(200);
    const mcp = await spanWhere((s) => s.attributes['svc.request_id'] === 'trace-mcp-1');
    expect(mcp.name).toBe('POST get_me');
    expect(mcp.attributes).toMatchObject({
      'svc.surface': 'mcp',
      'svc.operation': 'get_me',
      'svc.actor': 'app',
      'http.response.status_code': 200,
    });

    expect((await t.fetch('/login')).status).toBe(200);
    const page = await spanWhere((s) => s.attributes['svc.operation'] === 'GET /login');
    expect(page.attributes['svc.surface']).toBe('pages');

    // no secret in any span
    const everything = JSON.stringify(exporter.getFinishedSpans().map((s) => [s.name, s.attributes]));
    expect(everything).not.toContain(w.key);
  });

  it('a span per webhook attempt with its outcome', async () => {
    await using receiver = await startReceiver([{ status: 500 }]);
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await addWebhook(t.rt, w.roomId, receiver.url);
    expect(
      (await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hook' } })).status,
    ).toBe(201);
    const worker = createWebhookWorker({ services: t.rt.services });
    expect(await worker.runOnce()).toBe(1);
    await worker.stop();
    const attempt = await spanWhere((s) => s.name === 'webhook.attempt');
    expect(attempt.attributes).toMatchObject({
      'svc.webhook.outcome': 'retrying',
      'svc.webhook.attempt': 1,
      'http.response.status_code': 500,
      'svc.webhook.event_type': 'message.created',
    });
    // the worker's claim and its record are transactions of their own
    expect(exporter.getFinishedSpans().some((s) => s.name === 'db.transaction')).toBe(true);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
