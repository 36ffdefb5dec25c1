import type { Logger } from 'pino';
import type { WebhookDelivery } from '../../db/entities/index.js';
import { iso } from '../domain/time.js';
import { inSpan } from '../observability/tracing.js';
import type { ResolvedDeliveryDeps } from './deliveryDeps.js';
import type { AttemptUpdate, DeliveryWebhook } from './deliveryStore.js';
import { parseSnapshot, buildBody } from './payload.js';
import { backoffMs, classifyAttempt } from './retryPolicy.js';
import { effectiveSecrets } from './rotation.js';
import { decryptSecret } from './secretBox.js';
import { isStandardHeaderName, unsendableCustomHeader } from './customHeaders.js';
import { buildDeliveryHeaders } from './signing.js';
import { checkOutboundUrl, UrlRefusedError } from '../outbound/ssrfGuard.js';
import { customHeadersOf } from './webhookConfig.js';
import type { AttemptResult } from './attemptLog.js';

// the attempt's result types live with the attempt log that writes them, so the log imports nothing of this module
export type { AttemptRecordData, AttemptResult } from './attemptLog.js';

/** Shown instead of a custom header's value in attempt records: such values are often a receiver's credential. */
export const HIDDEN_HEADER_VALUE = '(custom header value hidden)';

/** The headers as recorded: every custom header's value hidden, everything else (signatures included) as sent. */
export function recordedHeaders(headers: Record<string, string>, customNames: string[]): Record<string, string> {
  const hidden = new Set(customNames.map((n) => n.toLowerCase()));
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, hidden.has(k.toLowerCase()) ? HIDDEN_HEADER_VALUE : v]),
  );
}

/** Error classes of attempts that never reached the receiver, by the delivery's `lastError`. */
const UNSENT_CLASS: Record<string, string> = { ssrf_blocked: 'ssrf_refused', network_error: 'dns' };

const decrypted = new WeakMap<DeliveryWebhook, Map<string, string>>();
/**
 * Decrypts a webhook's sealed values once per webhook object: the worker loads each webhook once per claimed
 * batch and shares that object between the batch's rows, so the plaintexts live as long as the batch.
 */
function decrypterFor(key: Buffer, webhook: DeliveryWebhook): (sealed: string) => string {
  let memo = decrypted.get(webhook);
  if (!memo) decrypted.set(webhook, (memo = new Map()));
  const m = memo;
  return (sealed) => {
    let plain = m.get(sealed);
    if (plain === undefined) m.set(sealed, (plain = decryptSecret(key, sealed)));
    return plain;
  };
}

const unsent = (error: string, startedAt: Date, url: string): AttemptResult => ({
  statusCode: null,
  durationMs: null,
  responseBody: null,
  error,
  record: {
    startedAt: iso(startedAt),
    errorClass: UNSENT_CLASS[error] ?? error,
    requestUrl: url,
    requestHeaders: null,
    requestBody: null,
    responseHeaders: null,
  },
});

/**
 * Makes one attempt of a delivery: builds the body for the webhook's contract, signs it afresh with this
 * attempt's timestamp, checks the URL again against the SSRF guard (resolving it and pinning the checked
 * address) and sends it. Never throws for the receiver's sake; every failure is a result. Observed: one
 * `webhook.attempt` span, and the attempt's outcome and commit-to-receipt time in the metrics.
 */
export function attemptDelivery(
  deps: ResolvedDeliveryDeps,
  row: WebhookDelivery,
  webhook: DeliveryWebhook | null,
  log: Logger,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const attrs = {
    'svc.webhook.event_type': row.eventType,
    'svc.webhook.delivery_id': row.deliveryId,
    'svc.webhook.attempt': row.attempts + 1,
  };
  return inSpan('webhook.attempt', attrs, async (span) => {
    const r = await sendAttempt(deps, row, webhook, log, signal);
    if (r.aborted) return r;
    const verdict = classifyAttempt(r.statusCode, r.error);
    const outcome =
      verdict === 'success'
        ? 'succeeded'
        : verdict === 'retry' && row.attempts + 1 < row.maxAttempts
          ? 'retrying'
          : 'failed';
    span?.setAttributes({
      'svc.webhook.outcome': outcome,
      ...(r.statusCode !== null ? { 'http.response.status_code': r.statusCode } : {}),
      ...(r.error ? { 'error.type': r.error } : {}),
    });
    deps.metrics?.deliveryAttempted(
      outcome,
      outcome === 'succeeded' ? (deps.now().getTime() - Date.parse(row.createdAt)) / 1000 : null,
    );
    return r;
  });
}

async function sendAttempt(
  deps: ResolvedDeliveryDeps,
  row: WebhookDelivery,
  webhook: DeliveryWebhook | null,
  log: Logger,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const now = deps.now();
  if (!webhook) return unsent('webhook_deleted', now, '');
  if (!webhook.active) return unsent('webhook_inactive', now, webhook.url);
  const event = parseSnapshot(row.payload);
  if (!event) return unsent('payload_invalid', now, webhook.url);
  let secrets: { current: string; next: string | null };
  let customHeaders;
  try {
    const decrypt = decrypterFor(deps.key, webhook);
    secrets = effectiveSecrets(deps.key, webhook, now, decrypt);
    // a Standard Webhooks name stored before such names were refused is dropped, never sent nor recorded
    customHeaders = customHeadersOf(deps.key, webhook, decrypt).filter(([n]) => !isStandardHeaderName(n));
  } catch {
    log.error(
      { webhookId: webhook.id },
      'webhook secret cannot be decrypted (SVC_WEBHOOK_KEY or webhook.key changed?)',
    );
    return unsent('secret_unreadable', now, webhook.url);
  }
  const unsendable = unsendableCustomHeader(customHeaders);
  if (unsendable !== null) {
    // a value stored before creation checked it the way HTTP does: no request could carry it
    log.warn(
      { webhookId: webhook.id, header: unsendable.slice(0, 100) },
      'webhook custom header cannot be sent; delivery not attempted',
    );
    return unsent('invalid_custom_header', now, webhook.url);
  }
  let target;
  try {
    target = await checkOutboundUrl(webhook.url, deps.policy);
  } catch (err) {
    if (err instanceof UrlRefusedError)
      return unsent(err.reason === 'unresolvable' ? 'network_error' : 'ssrf_blocked', now, webhook.url);
    throw err;
  }
  const body = buildBody(webhook.apiVersion, event, row.deliveryId);
  const headers = buildDeliveryHeaders({
    apiVersion: webhook.apiVersion,
    eventId: event.id,
    eventType: event.type,
    deliveryId: row.deliveryId,
    secrets,
    body,
    now,
    customHeaders,
  });
  const r = await deps.sender({ target: target!, headers, body, timeouts: deps.timeouts, signal });
  if (r.error === 'aborted')
    return { statusCode: null, durationMs: null, responseBody: null, error: 'aborted', aborted: true };
  const error = r.statusCode !== null && r.statusCode >= 300 && r.statusCode < 400 ? 'redirect_not_followed' : r.error;
  const errorClass = error === 'redirect_not_followed' ? error : error ? (r.errorClass ?? error) : null;
  return {
    statusCode: r.statusCode,
    durationMs: r.durationMs,
    responseBody: r.body,
    error,
    record: {
      startedAt: iso(now),
      errorClass,
      requestUrl: webhook.url,
      requestHeaders: recordedHeaders(
        headers,
        customHeaders.map(([n]) => n),
      ),
      requestBody: body.toString('utf8'),
      responseHeaders: r.headers ?? null,
    },
  };
}

/** Turns an attempt into the row's new state: retry with backoff while attempts remain, else finalize. */
export function updateAfterAttempt(row: WebhookDelivery, r: AttemptResult, now: Date, baseMs: number): AttemptUpdate {
  const verdict = classifyAttempt(r.statusCode, r.error);
  const common = {
    attempts: row.attempts + 1,
    statusCode: r.statusCode,
    durationMs: r.durationMs,
    responseBody: r.responseBody,
    // the history row names the failure as the attempt's record and a test event's outcome do (`dns`,
    // `connection_refused`, `ssrf_refused`…); retrying is decided on the coarser `error` above
    lastError: r.record?.errorClass ?? r.error,
  };
  if (verdict === 'retry' && common.attempts < row.maxAttempts) {
    return {
      ...common,
      state: 'pending',
      nextAttemptAt: iso(new Date(now.getTime() + backoffMs(baseMs, common.attempts))),
    };
  }
  return { ...common, state: verdict === 'success' ? 'succeeded' : 'failed', finalizedAt: iso(now) };
}
