import type { EntityManager } from 'typeorm';
import { deliveryStatesSince } from '../../db/stores/deliveries.js';

/** One hour of a webhook's deliveries: the hour's start (ISO, UTC) and how they ended. */
export interface DeliveryHour {
  hour: string;
  succeeded: number;
  failed: number;
  /** Still being tried. */
  pending: number;
}

const HOUR_MS = 3_600_000;

/**
 * A webhook's deliveries of the last `hours` hours (the current hour last), counted per UTC hour of their
 * creation by how they ended. Reads only the state and creation time of each row.
 */
export async function deliveriesPerHour(
  m: EntityManager,
  webhookId: string,
  now: Date,
  hours = 24,
): Promise<DeliveryHour[]> {
  const end = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  const start = end - hours * HOUR_MS;
  const out: DeliveryHour[] = Array.from({ length: hours }, (_, i) => ({
    hour: new Date(start + i * HOUR_MS).toISOString(),
    succeeded: 0,
    failed: 0,
    pending: 0,
  }));
  const rows = await deliveryStatesSince(m, webhookId, new Date(start).toISOString());
  for (const r of rows) {
    const i = Math.floor((new Date(r.createdAt).getTime() - start) / HOUR_MS);
    if (i < 0 || i >= hours) continue;
    if (r.state === 'succeeded') out[i].succeeded++;
    else if (r.state === 'failed') out[i].failed++;
    else out[i].pending++;
  }
  return out;
}
