import type { Webhook, WebhookAttempt, WebhookDelivery } from '../../webhooks/index.js';
import { html, type SafeHtml } from '../html.js';
import { page } from '../layout.js';
import { developerNav, webhookPath } from './developerNav.js';
import { when } from './viewParts.js';

export interface DeliveryViewOptions {
  webhook: Webhook;
  delivery: WebhookDelivery;
  attempts: WebhookAttempt[];
  csrf: string;
  email: string;
}

const parseHeaders = (raw: string | null): [string, string][] => {
  if (!raw) return [];
  try {
    return Object.entries(JSON.parse(raw) as Record<string, string>);
  } catch {
    return [];
  }
};

function headerList(raw: string | null, label: string): SafeHtml {
  const entries = parseHeaders(raw);
  if (!entries.length) return html`<p class="muted">No ${label}.</p>`;
  return html`<pre>${entries.map(([k, v]) => `${k}: ${v}`).join('\n')}</pre>`;
}

const outcome = (a: WebhookAttempt): SafeHtml => {
  if (a.statusCode !== null) {
    const ok = a.statusCode >= 200 && a.statusCode < 300;
    return html`<span class="badge ${ok ? 'ok' : 'off'}">${a.statusCode}</span>${a.errorClass ? html` <code>${a.errorClass}</code>` : null}`;
  }
  return html`<span class="badge off">no response</span> <code>${a.errorClass ?? 'unknown'}</code>`;
};

/** The request of one attempt exactly as sent (custom header values hidden), or why nothing was sent. */
function requestOf(a: WebhookAttempt): SafeHtml {
  if (!a.requestHeaders) return html`<p class="muted">Nothing was sent (${a.errorClass ?? 'refused'}).</p>`;
  return html`<pre>POST ${a.requestUrl}</pre>
${headerList(a.requestHeaders, 'request headers')}
<pre>${a.requestBody ?? ''}</pre>`;
}

/**
 * One delivery of a webhook: what it is, the exact request of its latest attempt (headers with
 * signatures, body; custom header values hidden, as they may be a receiver's credentials; the webhook's
 * secret never appears) and every attempt with its time, duration, status or error class, response
 * headers and the first 2 KB of the response.
 */
export function deliveryView(o: DeliveryViewOptions): SafeHtml {
  const d = o.delivery;
  const latest = o.attempts[o.attempts.length - 1];
  const state =
    d.state === 'succeeded'
      ? html`<span class="badge ok">Succeeded</span>`
      : d.state === 'failed'
        ? html`<span class="badge off">Failed</span>`
        : html`<span class="badge">Pending</span> <span class="muted">(${d.attempts} of ${d.maxAttempts} attempts made)</span>`;
  const rows = o.attempts.map(
    (a) => html`<tr>
<td>${a.attemptNumber}</td><td>${a.kind}</td><td>${when(a.startedAt)}</td>
<td>${a.durationMs === null ? html`<span class="muted">–</span>` : `${a.durationMs} ms`}</td>
<td>${outcome(a)}</td>
</tr>`,
  );
  const detail = o.attempts.map(
    (a) => html`<details id="attempt-${a.attemptNumber}-${a.id}">
<summary>Attempt ${a.attemptNumber} (${a.kind}), ${when(a.startedAt)}: ${a.statusCode ?? a.errorClass ?? ''}</summary>
<h3>Request</h3>
${requestOf(a)}
<h3>Response</h3>
${
  a.statusCode === null
    ? html`<p class="muted">No response${a.errorClass ? ` (${a.errorClass})` : ''}.</p>`
    : html`${headerList(a.responseHeaders, 'response headers')}
<p class="muted">Body (first 2 KB):</p>
<pre>${a.responseBody ?? ''}</pre>`
}
</details>`,
  );
  return page({
    title: 'Webhook delivery',
    wide: true,
    side: developerNav('webhooks'),
    signedIn: { email: o.email, csrf: o.csrf },
    body: html`<p><a href="${webhookPath(o.webhook.id)}">← Back to the webhook</a></p>
<dl>
<dt>Webhook</dt><dd><code>${o.webhook.url}</code></dd>
<dt>Event</dt><dd><code>${d.eventType}</code> <code>${d.eventId}</code>${d.redeliveryOf ? html` <span class="muted">(redelivery of ${d.redeliveryOf})</span>` : null}</dd>
<dt>History id</dt><dd><code>${d.id}</code></dd>
<dt>Svc-Webhook-Delivery</dt><dd><code>${d.deliveryId}</code></dd>
<dt>State</dt><dd>${state}</dd>
</dl>
<section aria-labelledby="request-title">
<h2 id="request-title">Request as sent</h2>
${
  latest
    ? html`<p class="muted">The latest attempt's request. Each attempt is signed afresh (its own timestamp and signature). Custom header values are hidden; the webhook's secret is never shown.</p>
${requestOf(latest)}`
    : html`<p class="muted">No attempt yet.</p>`
}
</section>
<section aria-labelledby="attempts-title">
<h2 id="attempts-title">Attempts</h2>
${
  o.attempts.length
    ? html`<div class="scroll" role="region" aria-label="Attempts" tabindex="0"><table><thead><tr><th scope="col">#</th><th scope="col">Kind</th><th scope="col">Time</th><th scope="col">Duration</th><th scope="col">Outcome</th></tr></thead>
<tbody>${rows}</tbody></table></div>
${detail}`
    : html`<p class="muted">No attempt on record${d.attempts ? ' (records are kept for a limited time)' : ''}.</p>`
}
</section>`,
  });
}
