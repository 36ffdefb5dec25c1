/** HTML that is already safe to emit: produced by `html` or marked with `raw`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What `html` accepts between the backticks: text is escaped, SafeHtml is kept, arrays are joined. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an element body or a quoted attribute value. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c]);

function render(v: HtmlValue): string {
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

/**
 * Auto-escaping tagged template for server-rendered pages:
 * `html\`<p title="${t}">${name}</p>\`` escapes `t` and `name`; nested `html` results and arrays of them are
 * inserted as they are; `null`, `undefined` and `false` render nothing. Always quote attribute values.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** Marks trusted markup as safe. Never pass anything derived from input. */
export const raw = (s: string): SafeHtml => new SafeHtml(s);
