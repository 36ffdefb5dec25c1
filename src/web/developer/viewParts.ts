import { html, type SafeHtml } from '../html.js';

/** A stored ISO timestamp as a `<time>` element, to the minute in UTC; `fallback` when there is none. */
export function when(iso: string | null | undefined, fallback = 'never'): SafeHtml {
  if (!iso) return html`<span class="muted">${fallback}</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** The hidden CSRF field of every form on the page. */
export const csrfField = (csrf: string): SafeHtml => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** An alert (errors) or a status line (confirmations) at the top of a section. */
export function message(m: { kind: 'error' | 'notice'; text: string } | undefined): SafeHtml | null {
  if (!m) return null;
  return m.kind === 'error'
    ? html`<p class="error" role="alert">${m.text}</p>`
    : html`<p class="notice" role="status">${m.text}</p>`;
}

/** The id of the one-time secret field (one per response). */
export const ONCE_FIELD_ID = 'copy-it-now';

export interface SecretOnceOptions {
  title: string;
  secret: string;
  /** What to do with it, shown as a warning. */
  warning: string;
}

/**
 * A secret shown once: a read-only field labelled `Copy it now`, a copy button (shown by the
 * page's script; without JavaScript the field can be selected and copied by hand) and a warning. It is only
 * in the response that created it: nothing stores it for a later page.
 */
export function secretOnce(o: SecretOnceOptions): SafeHtml {
  const id = ONCE_FIELD_ID;
  return html`<div class="once" role="region" aria-labelledby="${id}-title">
<p id="${id}-title"><strong>${o.title}</strong></p>
<p id="${id}-warning" class="danger">${o.warning}</p>
<label for="${id}">Copy it now</label>
<div class="copyrow"><input id="${id}" type="text" readonly autofocus value="${o.secret}" autocomplete="off" spellcheck="false" aria-describedby="${id}-warning"><button type="button" data-copy="${id}" hidden>Copy</button></div>
<p class="muted" role="status" aria-live="polite" data-copy-status="${id}"></p>
</div>`;
}
