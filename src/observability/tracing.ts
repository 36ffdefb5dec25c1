import {
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Tracer,
} from '@opentelemetry/api';

/**
 * Traces through the OpenTelemetry API only; the SDK is loaded by startTracing.ts when OTEL is configured.
 * Until then `tracer` is null and every helper here returns at once: no span object, no context switch.
 */
let tracer: Tracer | null = null;

/** Turns tracing on with the globally registered provider's tracer (startTracing.ts, or a test's provider). */
export function enableTracing(t: Tracer = trace.getTracer('svc')): void {
  tracer = t;
}

/** Back to no tracing (tests). */
export function disableTracing(): void {
  tracer = null;
}

export const tracingEnabled = (): boolean => tracer !== null;

/**
 * Starts the span of one HTTP request, child of the caller's `traceparent` when it sends one, and returns it
 * with the context to run the request in; null when tracing is off.
 */
export function startRequestSpan(
  method: string,
  headers: Record<string, string | string[] | undefined>,
): { span: Span; ctx: ReturnType<typeof context.active> } | null {
  if (!tracer) return null;
  const parent = propagation.extract(context.active(), headers);
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Ends a request's span with what the request turned out to be (operation, surface, status). */
export function endRequestSpan(
  span: Span,
  method: string,
  surface: string,
  operation: string,
  status: number,
  aborted = false,
): void {
  span.updateName(operation.startsWith(`${method} `) ? operation : `${method} ${operation}`);
  span.setAttributes({ 'svc.surface': surface, 'svc.operation': operation, 'http.response.status_code': status });
  if (aborted)
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'client closed the connection before the answer' });
  else if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Adds attributes to the active span (the request's, when called while serving one). */
export function annotateActiveSpan(attributes: Attributes): void {
  if (!tracer) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * Runs `fn` in a child span of the active one (a database transaction, a webhook attempt); `fn` gets the span
 * (null when tracing is off) to add what it learns. A throw marks the span as an error and is rethrown.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | null) => Promise<T>,
): Promise<T> {
  if (!tracer) return fn(null);
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}
