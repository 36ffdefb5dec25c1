/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. */
export const iso = (d: Date): string => d.toISOString();

/** First instant of the next UTC month (monthly API units reset). */
export function nextMonthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** `YYYY-MM` of the UTC month containing `d`. */
export const monthPeriod = (d: Date): string => d.toISOString().slice(0, 7);

/** ISO 8601 with an explicit UTC offset (`2026-12-01T00:00:00+00:00`), as `Svc-Api-Units-Reset` states it. */
export const isoWithOffset = (d: Date): string => `${d.toISOString().slice(0, 19)}+00:00`;
