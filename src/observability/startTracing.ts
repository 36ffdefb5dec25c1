import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { enableTracing } from './tracing.js';

/**
 * The OpenTelemetry SDK: an OTLP/HTTP exporter behind a batch processor, W3C trace context from incoming
 * `traceparent` headers, and async-local context so database and webhook spans nest under their request.
 * Imported (dynamically) only when Config.tracing is on; the exporter, sampler and resource read the
 * standard OTEL_* variables (`OTEL_SERVICE_NAME`, default `svc`). Returns the shutdown that flushes spans.
 */
export function startTracing(): () => Promise<void> {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'svc' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  enableTracing(trace.getTracer('svc'));
  return () => provider.shutdown();
}
