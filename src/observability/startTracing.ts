import { context, propagation, trace } from '@opentelemetry/api';
import { enableTracing } from './tracing.js';

/**
 * The OpenTelemetry SDK: an OTLP/HTTP exporter behind a batch processor, W3C trace context from incoming
 * `traceparent` headers, and async-local context so database and webhook spans nest under their request.
 * Called only when Config.tracing is on; the SDK packages are imported here, dynamically, so a process
 * without tracing never loads them (the bundle of `npm start` keeps them as `import()`). The exporter,
 * sampler and resource read the standard OTEL_* variables (`OTEL_SERVICE_NAME`, default `svc`).
 * Returns the shutdown that flushes the spans still buffered.
 */
export async function startTracing(): Promise<() => Promise<void>> {
  const [
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
    { OTLPTraceExporter },
    resources,
    { BatchSpanProcessor, TracerProvider },
    { ATTR_SERVICE_NAME },
  ] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'svc' }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  enableTracing(trace.getTracer('svc'));
  return () => provider.shutdown();
}
