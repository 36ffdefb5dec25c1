import { setMaxListeners } from 'node:events';
import type { WebhookDelivery } from '../../db/entities/index.js';
import type { Services } from '../domain/services.js';
import { newLeaseOwner } from '../outbox/leaseOwner.js';
import { OutcomeBatcher } from '../outbox/outcomeBatcher.js';
import { Slots } from '../outbox/slots.js';
import { WorkerLoop } from '../outbox/workerLoop.js';
import { createPooledSender } from './agentPool.js';
import { attemptDelivery, type AttemptResult, updateAfterAttempt } from './attemptDelivery.js';
import { deliveryDepsFor, type ResolvedDeliveryDeps, type WebhookDeliveryDeps } from './deliveryDeps.js';
import {
  type AttemptUpdate,
  claimDueBatch,
  type ClaimedDelivery,
  type Settlement,
  settleDeliveries,
  settleIn,
} from './deliveryStore.js';
import { promoteEndedRotations } from './rotation.js';
import { DeliveryThrottle } from './throttle.js';
import { iso } from '../domain/time.js';

export interface WebhookWorkerOptions extends Partial<WebhookDeliveryDeps> {
  services: Services;
  /** Deliveries claimed per round (one claiming transaction). */
  batchSize?: number;
  /** Attempts in flight at most while running (start()); default twice batchSize. */
  maxInFlight?: number;
  /** How long a claim holds; must outlast one attempt (DNS + connect + response). A crashed holder's rows
   * are claimed again when it expires. */
  leaseMs?: number;
  /** Pause between rounds when nothing was due. Commits of this process wake the worker at once; the poll
   * finds retries that fell due, expired leases and other processes' commits. */
  pollMs?: number;
  /** The longest pause an idle worker backs off to (claims that found nothing double it from pollMs). */
  maxIdleMs?: number;
}

export interface WebhookWorker {
  /** Lease owner id of this worker. */
  readonly owner: string;
  /** One round: promote ended rotations and claim due deliveries (one transaction), attempt each once,
   * record every result (one transaction). Returns the number claimed. */
  runOnce(): Promise<number>;
  /** Runs until stop(): claims a batch whenever there is room for one below maxInFlight attempts in flight
   * (a partial batch at most once per pollMs), woken by this process's commits, polling otherwise. */
  start(): void;
  /** Stops claiming, aborts attempts in flight and gives their leases back (those attempts do not count). */
  stop(): Promise<void>;
}

/**
 * Longest wait, while running, before finished attempts are recorded on their own (a claim in the meantime
 * records them in its transaction; maxInFlight waiting outcomes cut it short): the receiver already has
 * them, so this delays only the bookkeeping and records more rows per transaction. A crash in this window
 * means those deliveries are sent again (at least once), as a crash during an attempt would.
 */
const RECORD_WINDOW_MS = 25;

/**
 * What became of one claimed delivery, waiting to be written with others: `attempted` (the row gets the
 * attempt's new state: pending again for a retry, succeeded or failed) or `released` (stop() aborted the
 * attempt: the lease is given back untouched and the attempt does not count).
 */
type Outcome =
  | { kind: 'attempted'; row: WebhookDelivery; update: AttemptUpdate; result: AttemptResult }
  | { kind: 'released'; row: WebhookDelivery }
  | { kind: 'deferred'; row: WebhookDelivery; until: string };

const settlementsOf = (outcomes: Outcome[]): Settlement[] =>
  outcomes.map((x) => {
    if (x.kind === 'released') return { id: x.row.id, update: null };
    if (x.kind === 'deferred') return { id: x.row.id, update: null, deferTo: x.until };
    return { id: x.row.id, update: x.update, made: { row: x.row, result: x.result, attemptNumber: x.update.attempts } };
  });

/**
 * The delivery worker of the transactional outbox (ARCHITECTURE "Events and webhooks"): at least once,
 * resumable after a crash (leases expire), safe with several workers on one database. Running, it is a
 * continuous loop: a commit in this runtime that queued deliveries wakes it (after the commit; commits of
 * other processes are found by polling), it claims while fewer than `maxInFlight` attempts are out
 * (`Slots`), so one slow receiver does not hold up the next claim, and finished attempts are recorded
 * together (`OutcomeBatcher`), with the next claim or on their own, never one transaction per row.
 * Connections to receivers are kept alive per (origin, checked address), see agentPool.ts. The clock, the
 * resolver and the HTTP sender are injectable, so tests drive it with runOnce() and move the clock.
 */
export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  const { services: s, batchSize = 25, leaseMs = 60_000, pollMs = 100, maxIdleMs, ...overrides } = o;
  const maxInFlight = Math.max(1, o.maxInFlight ?? 2 * batchSize);
  const owner = newLeaseOwner();
  const loop = new WorkerLoop();
  const abort = loop.signal;
  // every attempt in flight (the loop's and runOnce's) listens to it until it ends
  setMaxListeners(maxInFlight + batchSize + 16, abort);
  const pool = createPooledSender();
  const rounds = new Set<Promise<number>>();

  const depsNow = () => deliveryDepsFor(s, overrides, pool.send);

  // the per-webhook throttle: rows over a webhook's rate go back to the outbox due when they fit, and
  // those times are kept, so a row claimed again at its time is attempted without being counted twice
  const throttle = new DeliveryThrottle();
  const reserved = new Map<string, number>();

  /** Splits a claim into what is attempted now and what the throttle puts back for later. */
  function admit(
    deps: ResolvedDeliveryDeps,
    claimed: ClaimedDelivery[],
  ): { now: ClaimedDelivery[]; deferred: Outcome[] } {
    const t = deps.now().getTime();
    const now: ClaimedDelivery[] = [];
    const deferred: Outcome[] = [];
    for (const c of claimed) {
      const rate = c.webhook?.active ? c.webhook.maxDeliveriesPerSecond : null;
      const held = reserved.get(c.row.id);
      if (held !== undefined) reserved.delete(c.row.id);
      if (!rate || (held !== undefined && held <= t)) {
        now.push(c);
        continue;
      }
      const at = throttle.admit(c.row.webhookId, rate, t);
      if (at <= t) {
        now.push(c);
        continue;
      }
      if (reserved.size >= 100_000) reserved.clear(); // rows deleted meanwhile: forget, at worst a row waits once more
      reserved.set(c.row.id, at);
      deferred.push({ kind: 'deferred', row: c.row, until: iso(new Date(at)) });
    }
    return { now, deferred };
  }

  // the story of one delivery: claimed (with the outcomes waiting to be written) → attempted → recorded

  /** Promotes ended rotations, records `settle` (outcomes waiting to be written) and claims, in one transaction. */
  async function claim(deps: ResolvedDeliveryDeps, limit: number, settle: Outcome[] = []): Promise<ClaimedDelivery[]> {
    const now = deps.now();
    let written: boolean[] = [];
    const claimed = await claimDueBatch(s, owner, now, new Date(now.getTime() + leaseMs), limit, async (m) => {
      await promoteEndedRotations(s, now, m);
      written = await settleIn(m, owner, settlementsOf(settle), { now, disableAfterMs: deps.disableAfterMs });
    });
    logOutcomes(settle, written);
    return claimed;
  }

  /** Attempts one claimed delivery; null when it failed unexpectedly (its lease expires and it is tried again). */
  async function attempt(deps: ResolvedDeliveryDeps, { row, webhook }: ClaimedDelivery): Promise<Outcome | null> {
    try {
      const r = await attemptDelivery(deps, row, webhook, s.log, abort);
      if (r.aborted) return { kind: 'released', row };
      return { kind: 'attempted', row, update: updateAfterAttempt(row, r, deps.now(), deps.backoffBaseMs), result: r };
    } catch (err) {
      // the lease expires and the row is tried again: nothing is lost
      s.log.error({ err, deliveryId: row.deliveryId }, 'webhook attempt failed unexpectedly');
      return null;
    }
  }

  /** Writes a batch of outcomes in one transaction; on failure the leases expire and the rows are retried. */
  async function record(outcomes: Outcome[]): Promise<void> {
    if (!outcomes.length) return;
    try {
      const deps = depsNow();
      logOutcomes(
        outcomes,
        await settleDeliveries(s, owner, settlementsOf(outcomes), {
          now: deps.now(),
          disableAfterMs: deps.disableAfterMs,
        }),
      );
    } catch (err) {
      s.log.error(
        { err, deliveries: outcomes.length },
        'recording webhook attempts failed; their leases will expire and they will be retried',
      );
    }
  }

  function logOutcomes(outcomes: Outcome[], written: boolean[]): void {
    outcomes.forEach((x, i) => {
      if (x.kind !== 'attempted') return;
      s.log.info(
        {
          deliveryId: x.row.deliveryId,
          webhookId: x.row.webhookId,
          eventType: x.row.eventType,
          attempt: x.update.attempts,
          statusCode: x.result.statusCode,
          error: x.result.error,
          state: x.update.state,
          recorded: written[i],
        },
        'webhook attempt',
      );
    });
  }

  async function runOnce(): Promise<number> {
    if (abort.aborted) return 0;
    const round = (async () => {
      const deps = depsNow();
      const claimed = await claim(deps, batchSize);
      const { now, deferred } = admit(deps, claimed);
      const outcomes = await Promise.all(now.map((c) => attempt(deps, c)));
      await record([...deferred, ...outcomes.filter((x): x is Outcome => x !== null)]);
      return claimed.length;
    })();
    rounds.add(round);
    try {
      return await round;
    } finally {
      rounds.delete(round);
    }
  }

  // the continuous loop (start()): attempts in flight take slots, their outcomes wait to be written together
  const slots = new Slots(() => loop.slotFreed());
  const outcomes = new OutcomeBatcher<Outcome>({
    windowMs: RECORD_WINDOW_MS,
    max: maxInFlight,
    record,
    stopping: () => abort.aborted,
  });
  const fullBatch = Math.min(batchSize, maxInFlight);
  let lastClaim = 0;

  /** One turn: wait for room, or claim what fits (recording the waiting outcomes in the same transaction). */
  async function turn(): Promise<void> {
    const room = maxInFlight - slots.busy;
    const sinceClaim = Date.now() - lastClaim;
    // claim a whole batch when there is room for one (refilling slot by slot would cost a claim and a record
    // transaction per delivery); a partial one once per poll interval, so attempts held up by a slow
    // receiver do not stop the others
    if (room <= 0 || (slots.busy > 0 && room < fullBatch && sinceClaim < pollMs)) {
      await loop.waitForSlot(room > 0 ? pollMs - sinceClaim : pollMs);
      return;
    }
    const want = Math.min(batchSize, room);
    loop.claiming();
    lastClaim = Date.now();
    let got = 0;
    // outcomes waiting to be recorded go with the claim: one transaction instead of two
    const settle = outcomes.take();
    try {
      const deps = depsNow();
      const claimed = await claim(deps, want, settle);
      got = claimed.length;
      const admitted = admit(deps, claimed);
      for (const d of admitted.deferred) {
        if (d.kind === 'deferred') loop.dueAt(Date.parse(d.until));
        outcomes.add(d);
      }
      for (const c of admitted.now) {
        slots.occupy(attempt(deps, c), (out) => {
          if (out?.kind === 'attempted' && out.update.nextAttemptAt) loop.dueAt(Date.parse(out.update.nextAttemptAt));
          if (out) outcomes.add(out);
        });
      }
    } catch (err) {
      s.log.error({ err }, 'webhook worker round failed');
      // nothing of that transaction was written: record those outcomes on their own
      outcomes.giveBack(settle);
    }
    if (got < want) await loop.idle(pollMs, got, maxIdleMs);
    else loop.worked();
  }

  async function drain(): Promise<void> {
    await slots.drained();
    await outcomes.settled();
  }

  return {
    owner,
    runOnce,
    start() {
      loop.start(s.wake.deliveries, turn, drain);
    },
    async stop() {
      await loop.stop(() => outcomes.cutShort());
      await Promise.allSettled([...rounds]);
      await pool.close();
    },
  };
}
