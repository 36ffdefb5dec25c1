import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import os from 'node:os';
import type { WebhookDelivery } from '../../db/entities/index.js';
import type { Services } from '../domain/services.js';
import { createPooledSender } from './agentPool.js';
import { attemptDelivery, type AttemptResult, updateAfterAttempt } from './attemptDelivery.js';
import { deliveryDepsFor, type ResolvedDeliveryDeps, type WebhookDeliveryDeps } from './deliveryDeps.js';
import { onDeliveriesCommitted } from './deliverySignal.js';
import { type AttemptUpdate, claimDueBatch, type ClaimedDelivery, type Settlement, settleDeliveries, settleIn } from './deliveryStore.js';
import { promoteEndedRotations } from './rotation.js';

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

/** The outcome of one attempt, waiting to be written with others. */
interface Outcome {
  row: WebhookDelivery;
  /** null: aborted by stop(), the lease is given back untouched. */
  update: AttemptUpdate | null;
  result?: AttemptResult;
}

/**
 * The delivery worker of the transactional outbox (ARCHITECTURE "Events and webhooks"): at least once,
 * resumable after a crash (leases expire), safe with several workers on one database. Running, it is a
 * continuous loop: a commit in this process that queued deliveries wakes it (after the commit; commits of
 * other processes are found by polling), it claims while fewer than `maxInFlight` attempts are out, so one
 * slow receiver does not hold up the next claim, and finished attempts are recorded together, with the next
 * claim or on their own, never one transaction per row. Connections to receivers are kept alive per
 * (origin, checked address), see agentPool.ts. The clock, the resolver and the HTTP sender are injectable,
 * so tests drive it with runOnce() and move the clock.
 */
export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  const { services: s, batchSize = 25, leaseMs = 60_000, pollMs = 100, ...overrides } = o;
  const maxInFlight = Math.max(1, o.maxInFlight ?? 2 * batchSize);
  const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const abort = new AbortController();
  // every attempt in flight (the loop's and runOnce's) listens to it until it ends
  setMaxListeners(maxInFlight + batchSize + 16, abort.signal);
  const pool = createPooledSender();
  const rounds = new Set<Promise<number>>();
  let loop: Promise<void> | null = null;

  const depsNow = () => deliveryDepsFor(s, overrides, pool.send);

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

  async function attempt(deps: ResolvedDeliveryDeps, { row, webhook }: ClaimedDelivery): Promise<Outcome | null> {
    try {
      const r = await attemptDelivery(deps, row, webhook, s.log, abort.signal);
      if (r.aborted) return { row, update: null };
      return { row, update: updateAfterAttempt(row, r, deps.now(), deps.backoffBaseMs), result: r };
    } catch (err) {
      // the lease expires and the row is tried again: nothing is lost
      s.log.error({ err, deliveryId: row.deliveryId }, 'webhook attempt failed unexpectedly');
      return null;
    }
  }

  const settlementsOf = (outcomes: Outcome[]): Settlement[] => outcomes.map((x) => ({
    id: x.row.id, update: x.update, made: x.update && x.result ? { row: x.row, result: x.result, attemptNumber: x.update.attempts } : undefined,
  }));

  function logOutcomes(outcomes: Outcome[], written: boolean[]): void {
    outcomes.forEach(({ row, update, result }, i) => {
      if (!update || !result) return;
      s.log.info(
        { deliveryId: row.deliveryId, webhookId: row.webhookId, eventType: row.eventType, attempt: update.attempts, statusCode: result.statusCode, error: result.error, state: update.state, recorded: written[i] },
        'webhook attempt',
      );
    });
  }

  /** Writes a batch of outcomes in one transaction; on failure the leases expire and the rows are retried. */
  async function record(outcomes: Outcome[]): Promise<void> {
    if (!outcomes.length) return;
    try {
      const deps = depsNow();
      logOutcomes(outcomes, await settleDeliveries(s, owner, settlementsOf(outcomes), { now: deps.now(), disableAfterMs: deps.disableAfterMs }));
    } catch (err) {
      s.log.error({ err, deliveries: outcomes.length }, 'recording webhook attempts failed; their leases will expire and they will be retried');
    }
  }

  async function runOnce(): Promise<number> {
    if (abort.signal.aborted) return 0;
    const round = (async () => {
      const deps = depsNow();
      const claimed = await claim(deps, batchSize);
      const outcomes = await Promise.all(claimed.map((c) => attempt(deps, c)));
      await record(outcomes.filter((x): x is Outcome => x !== null));
      return claimed.length;
    })();
    rounds.add(round);
    try {
      return await round;
    } finally {
      rounds.delete(round);
    }
  }

  // the continuous loop (start()): attempts in flight, and outcomes waiting to be written
  const inFlight = new Set<Promise<void>>();
  let finished: Outcome[] = [];
  let recording: Promise<void> | null = null;
  let woken = false;

  let recordNow: (() => void) | null = null;
  /** Waits up to RECORD_WINDOW_MS for more outcomes; cut short once maxInFlight are waiting, or by stop(). */
  const gather = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        recordNow = null;
        resolve();
      };
      const timer = setTimeout(done, RECORD_WINDOW_MS);
      recordNow = done;
    });

  function flush(): void {
    if (finished.length >= maxInFlight || abort.signal.aborted) recordNow?.();
    recording ??= (async () => {
      while (finished.length) {
        if (finished.length < maxInFlight && !abort.signal.aborted) await gather();
        const batch = finished;
        finished = [];
        await record(batch);
      }
      recording = null;
    })();
  }

  // the loop waits either for a commit signal (nothing was due) or for a free slot (all slots busy)
  let wakeSleeper: (() => void) | null = null;
  let slotSleeper: (() => void) | null = null;
  const pause = (ms: number, until: 'commit' | 'slot') =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakeSleeper = slotSleeper = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (until === 'commit') wakeSleeper = done;
      else slotSleeper = done;
    });

  function wake(): void {
    woken = true;
    wakeSleeper?.();
  }

  async function run(): Promise<void> {
    const unsubscribe = onDeliveriesCommitted(s.ds, wake);
    const fullBatch = Math.min(batchSize, maxInFlight);
    let lastClaim = 0;
    try {
      while (!abort.signal.aborted) {
        const room = maxInFlight - inFlight.size;
        const sinceClaim = Date.now() - lastClaim;
        // claim a whole batch when there is room for one (refilling slot by slot would cost a claim and a
        // record transaction per delivery); a partial one once per poll interval, so attempts held up by a
        // slow receiver do not stop the others
        if (room <= 0 || (inFlight.size > 0 && room < fullBatch && sinceClaim < pollMs)) {
          await pause(room > 0 ? pollMs - sinceClaim : pollMs, 'slot');
          continue;
        }
        const want = Math.min(batchSize, room);
        // a commit signalled from here on (during the claim) makes the loop claim again instead of sleeping
        woken = false;
        lastClaim = Date.now();
        let got = 0;
        // outcomes waiting to be recorded go with the claim: one transaction instead of two
        const settle = finished;
        finished = [];
        try {
          const deps = depsNow();
          const claimed = await claim(deps, want, settle);
          got = claimed.length;
          for (const c of claimed) {
            const p: Promise<void> = attempt(deps, c).then((out) => {
              inFlight.delete(p);
              slotSleeper?.();
              if (out) {
                finished.push(out);
                flush();
              }
            });
            inFlight.add(p);
          }
        } catch (err) {
          s.log.error({ err }, 'webhook worker round failed');
          // nothing of that transaction was written: record those outcomes on their own
          if (settle.length) {
            finished = settle.concat(finished);
            flush();
          }
        }
        if (got < want && !woken && !abort.signal.aborted) await pause(pollMs, 'commit');
      }
    } finally {
      unsubscribe();
      await Promise.all(inFlight);
      await recording;
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
      wakeSleeper?.();
      slotSleeper?.();
      recordNow?.();
      await loop;
      await Promise.allSettled([...rounds]);
      await pool.close();
    },
  };
}
