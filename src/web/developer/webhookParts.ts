import { standardSecret, type WebhookDelivery } from '../../webhooks/index.js';
import { html, type SafeHtml } from '../html.js';
import { secretOnce } from './viewParts.js';

/** A secret just made, in both forms, shown once. */
export function onceSecret(once: { title: string; secret: string }): SafeHtml {
  return html`${secretOnce({
    title: once.title,
    secret: once.secret,
    warning:
      "This signing secret is shown only once: copy it now into your receiver's configuration. It cannot be shown again.",
  })}
${standardSecretField(once.secret)}`;
}

/**
 * The same secret in the Standard Webhooks form (`whsec_` + base64 of the key bytes), for receivers that
 * verify with the standard's libraries; shown once, beside the secret itself.
 */
function standardSecretField(secret: string): SafeHtml {
  const id = 'copy-it-now-standard';
  return html`<div class="once" role="region" aria-labelledby="${id}-label">
<label id="${id}-label" for="${id}">Standard Webhooks secret</label>
<div class="copyrow"><input id="${id}" type="text" readonly value="${standardSecret(secret)}" autocomplete="off" spellcheck="false" aria-describedby="${id}-hint"><button type="button" data-copy="${id}" hidden>Copy</button></div>
<p class="muted" id="${id}-hint">The same key for the Standard Webhooks libraries (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code> headers). Also shown only once.</p>
<p class="muted" role="status" aria-live="polite" data-copy-status="${id}"></p>
</div>`;
}

/** Whether a delivery succeeded, as a badge. */
export function deliveryState(d: WebhookDelivery): SafeHtml {
  if (d.state === 'succeeded') return html`<span class="badge ok">Yes</span>`;
  if (d.state === 'failed') return html`<span class="badge off">No</span>`;
  return html`<span class="badge">Pending</span> <span class="muted">(${d.attempts} of ${d.maxAttempts} attempts made)</span>`;
}
