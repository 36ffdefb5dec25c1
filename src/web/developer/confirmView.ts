import { html, type SafeHtml } from '../html.js';
import { page } from '../layout.js';
import { csrfField } from './viewParts.js';

export interface ConfirmViewOptions {
  title: string;
  /** What will happen, in a sentence or two. */
  question: SafeHtml;
  action: string;
  fields: Record<string, string>;
  button: string;
  cancel: string;
  csrf: string;
  email: string;
  /** The button reads as destructive (default); false for a step that changes nothing at once. */
  danger?: boolean;
}

/**
 * The confirmation step of a destructive action, as its own page so it works without JavaScript: the
 * button posts the action with `confirm=yes` and the CSRF token; `Cancel` goes back without a change.
 */
export function confirmView(o: ConfirmViewOptions): SafeHtml {
  return page({
    title: o.title,
    signedIn: { email: o.email, csrf: o.csrf },
    body: html`${o.question}
<form method="post" action="${o.action}">
${csrfField(o.csrf)}
${Object.entries(o.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="confirm" value="yes">
<div class="buttons">
<button type="submit" class="${o.danger === false ? 'primary' : 'danger'}">${o.button}</button>
<a class="button" href="${o.cancel}">Cancel</a>
</div>
</form>`,
  });
}
