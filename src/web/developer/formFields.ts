/** One text field of a submitted form: a repeated field (an array) or a missing one gives ''. */
export function text(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  return typeof v === 'string' ? v : '';
}

/** A field that may repeat (checkboxes): every string value. */
export function list(body: Record<string, unknown>, name: string): string[] {
  const v = body[name];
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
