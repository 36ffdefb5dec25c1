import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Webhook, type WebhookDelivery } from '../../db/entities/index.js';
import type { Services } from '../domain/services.js';
import { attemptDelivery, updateAfterAttempt } from './attemptDelivery.js';
import { deliveryDepsFor, type WebhookDeliveryDeps } from './deliveryDeps.js';
import { claimDueDeliveries, finishAttempt, releaseLease } from './deliveryStore.js';
import { promoteEndedRotations } from './rotation.js';

export interface WebhookWorkerOptions extends Partial<WebhookDeliveryDeps> {
  services: Services;
  /** Deliveries claimed per round. */
  batchSize?: number;
  /** How long a claim holds; must outlast one attempt (DNS + connect + response). A crashed holder's rows
   * are claimed again when it expires. */
  leaseMs?: number;
  /** Pause between rounds when nothing was due. */
  pollMs?: number;
}

export interface WebhookWorker {
  /** Lease owner id of this worker. */
  readonly owner: string;
  /** One round (one write transaction, then the attempts): promote ended rotations, claim due deliveries,
   * attempt each once, record. Returns the number claimed. */
  runOnce(): Promise<number>;
  /** Runs rounds until stop(). */
  start(): void;
  /** Stops claiming, aborts attempts in flight and gives their leases back (those attempts do not count). */
  stop(): Promise<void>;
}

/**
 * The delivery worker of the transactional outbox (ARCHITECTURE "Events and webhooks"): at least once,
 * resumable after a crash (leases expire), safe with several workers on one database. The clock, the
 * resolver and the HTTP sender are injectable, so tests drive it with runOnce() and move the clock.
 */
export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  const s = o.services;
  // a short idle poll keeps commit-to-receipt latency low (bench/README.md); an idle round is one cheap query
  const { services: _s, batchSize = 25, leaseMs = 60_000, pollMs = 100, ...overrides } = o;
  const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const abort = new AbortController();
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;

  async function handle(deps: ReturnType<typeof deliveryDepsFor>, row: WebhookDelivery): Promise<void> {
    try {
      const webhook = await s.ds.getRepository(Webhook).findOneBy({ id: row.webhookId });
      const r = await attemptDelivery(deps, row, webhook, s.log, abort.signal);
      if (r.aborted) return await releaseLease(s, row.id, owner);
      const update = updateAfterAttempt(row, r, deps.now(), deps.backoffBaseMs);
      await finishAttempt(s, row.id, owner, update);
      s.log.info(
        { deliveryId: row.deliveryId, webhookId: row.webhookId, eventType: row.eventType, attempt: update.attempts, statusCode: r.statusCode, error: r.error, state: update.state },
        'webhook attempt',
      );
    } catch (err) {
      // the lease expires and the row is tried again: nothing is lost
      s.log.error({ err, deliveryId: row.deliveryId }, 'webhook attempt failed unexpectedly');
    }
  }

  async function runOnce(): Promise<number> {
    if (abort.signal.aborted) return 0;
    const deps = deliveryDepsFor(s, overrides);
    const now = deps.now();
    const rows = await claimDueDeliveries(s, owner, now, new Date(now.getTime() + leaseMs), batchSize, (m) => promoteEndedRotations(s, now, m));
    await Promise.all(rows.map((row) => handle(deps, row)));
    return rows.length;
  }

  async function run(): Promise<void> {
    while (!abort.signal.aborted) {
      let n = 0;
      try {
        n = await runOnce();
      } catch (err) {
        s.log.error({ err }, 'webhook worker round failed');
      }
      if (n < batchSize && !abort.signal.aborted) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        wake = null;
      }
    }
  }

  return {
    owner,
    runOnce,
    start() {
      loop ??= run();
    },
    async stop() {
      abort.abort();
      wake?.();
      await loop;
    },
  };
}
