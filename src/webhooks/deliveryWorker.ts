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

/** One worker: its options, lease owner, loop, sender pool, throttle, and the attempts and outcomes in flight. */
interface DeliveryWorkerState {
  s: Services;
  overrides: Partial<WebhookDeliveryDeps>;
  batchSize: number;
  maxInFlight: number;
  leaseMs: number;
  pollMs: number;
  maxIdleMs: number | undefined;
  owner: string;
  loop: WorkerLoop;
  pool: ReturnType<typeof createPooledSender>;
  /** runOnce() rounds in flight (stop() waits for them). */
  rounds: Set<Promise<number>>;
  // the per-webhook throttle: rows over a webhook's rate go back to the outbox due when they fit, and
  // those times are kept, so a row claimed again at its time is attempted without being counted twice
  throttle: DeliveryThrottle;
  reserved: Map<string, number>;
  // the continuous loop (start()): attempts in flight take slots, their outcomes wait to be written together
  slots: Slots;
  outcomes: OutcomeBatcher<Outcome>;
  lastClaim: number;
}

const depsNow = (w: DeliveryWorkerState) => deliveryDepsFor(w.s, w.overrides, w.pool.send);

/** Splits a claim into what is attempted now and what the throttle puts back for later. */
function admit(
  w: DeliveryWorkerState,
  deps: ResolvedDeliveryDeps,
  claimed: ClaimedDelivery[],
): { now: ClaimedDelivery[]; deferred: Outcome[] } {
  const t = deps.now().getTime();
  const now: ClaimedDelivery[] = [];
  const deferred: Outcome[] = [];
  for (const c of claimed) {
    const rate = c.webhook?.active ? c.webhook.maxDeliveriesPerSecond : null;
    const held = w.reserved.get(c.row.id);
    if (held !== undefined) w.reserved.delete(c.row.id);
    if (!rate || (held !== undefined && held <= t)) {
      now.push(c);
      continue;
    }
    const at = w.throttle.admit(c.row.webhookId, rate, t);
    if (at <= t) {
      now.push(c);
      continue;
    }
    // rows deleted meanwhile: forget, at worst a row waits once more
    if (w.reserved.size >= 100_000) w.reserved.clear();
    w.reserved.set(c.row.id, at);
    deferred.push({ kind: 'deferred', row: c.row, until: iso(new Date(at)) });
  }
  return { now, deferred };
}

// the story of one delivery: claimed (with the outcomes waiting to be written) → attempted → recorded

/** Promotes ended rotations, records `settle` (outcomes waiting to be written) and claims, in one transaction. */
async function claim(
  w: DeliveryWorkerState,
  deps: ResolvedDeliveryDeps,
  limit: number,
  settle: Outcome[] = [],
): Promise<ClaimedDelivery[]> {
  const now = deps.now();
  let written: boolean[] = [];
  const claimed = await claimDueBatch(w.s, w.owner, now, new Date(now.getTime() + w.leaseMs), limit, async (m) => {
    await promoteEndedRotations(w.s, now, m);
    written = await settleIn(m, w.owner, settlementsOf(settle), { now, disableAfterMs: deps.disableAfterMs });
  });
  logOutcomes(w, settle, written);
  return claimed;
}

/** Attempts one claimed delivery; null when it failed unexpectedly (its lease expires and it is tried again). */
async function attempt(
  w: DeliveryWorkerState,
  deps: ResolvedDeliveryDeps,
  { row, webhook }: ClaimedDelivery,
): Promise<Outcome | null> {
  try {
    const r = await attemptDelivery(deps, row, webhook, w.s.log, w.loop.signal);
    if (r.aborted) return { kind: 'released', row };
    return { kind: 'attempted', row, update: updateAfterAttempt(row, r, deps.now(), deps.backoffBaseMs), result: r };
  } catch (err) {
    // the lease expires and the row is tried again: nothing is lost
    w.s.log.error({ err, deliveryId: row.deliveryId }, 'webhook attempt failed unexpectedly');
    return null;
  }
}

/** Writes a batch of outcomes in one transaction; on failure the leases expire and the rows are retried. */
async function record(w: DeliveryWorkerState, outcomes: Outcome[]): Promise<void> {
  if (!outcomes.length) return;
  try {
    const deps = depsNow(w);
    logOutcomes(
      w,
      outcomes,
      await settleDeliveries(w.s, w.owner, settlementsOf(outcomes), {
        now: deps.now(),
        disableAfterMs: deps.disableAfterMs,
      }),
    );
  } catch (err) {
    w.s.log.error(
      { err, deliveries: outcomes.length },
      'recording webhook attempts failed; their leases will expire and they will be retried',
    );
  }
}

function logOutcomes(w: DeliveryWorkerState, outcomes: Outcome[], written: boolean[]): void {
  outcomes.forEach((x, i) => {
    if (x.kind !== 'attempted') return;
    w.s.log.info(
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

/** One round outside the loop: claim a batch, attempt what the throttle admits, record everything. */
async function runOnce(w: DeliveryWorkerState): Promise<number> {
  if (w.loop.stopping) return 0;
  const round = (async () => {
    const deps = depsNow(w);
    const claimed = await claim(w, deps, w.batchSize);
    const { now, deferred } = admit(w, deps, claimed);
    const outcomes = await Promise.all(now.map((c) => attempt(w, deps, c)));
    await record(w, [...deferred, ...outcomes.filter((x): x is Outcome => x !== null)]);
    return claimed.length;
  })();
  w.rounds.add(round);
  try {
    return await round;
  } finally {
    w.rounds.delete(round);
  }
}

/** One turn: wait for room, or claim what fits (recording the waiting outcomes in the same transaction). */
async function turn(w: DeliveryWorkerState): Promise<void> {
  const room = w.maxInFlight - w.slots.busy;
  const sinceClaim = Date.now() - w.lastClaim;
  // claim a whole batch when there is room for one (refilling slot by slot would cost a claim and a record
  // transaction per delivery); a partial one once per poll interval, so attempts held up by a slow
  // receiver do not stop the others
  if (room <= 0 || (w.slots.busy > 0 && room < Math.min(w.batchSize, w.maxInFlight) && sinceClaim < w.pollMs)) {
    await w.loop.waitForSlot(room > 0 ? w.pollMs - sinceClaim : w.pollMs);
    return;
  }
  const want = Math.min(w.batchSize, room);
  w.loop.claiming();
  w.lastClaim = Date.now();
  let got = 0;
  // outcomes waiting to be recorded go with the claim: one transaction instead of two
  const settle = w.outcomes.take();
  try {
    const deps = depsNow(w);
    const claimed = await claim(w, deps, want, settle);
    got = claimed.length;
    const admitted = admit(w, deps, claimed);
    for (const d of admitted.deferred) {
      if (d.kind === 'deferred') w.loop.dueAt(Date.parse(d.until));
      w.outcomes.add(d);
    }
    for (const c of admitted.now) {
      w.slots.occupy(attempt(w, deps, c), (out) => {
        if (out?.kind === 'attempted' && out.update.nextAttemptAt) w.loop.dueAt(Date.parse(out.update.nextAttemptAt));
        if (out) w.outcomes.add(out);
      });
    }
  } catch (err) {
    w.s.log.error({ err }, 'webhook worker round failed');
    // nothing of that transaction was written: record those outcomes on their own
    w.outcomes.giveBack(settle);
  }
  if (got < want) await w.loop.idle(w.pollMs, got, w.maxIdleMs);
  else w.loop.worked();
}

async function drain(w: DeliveryWorkerState): Promise<void> {
  await w.slots.drained();
  await w.outcomes.settled();
}

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
  const loop = new WorkerLoop();
  // every attempt in flight (the loop's and runOnce's) listens to it until it ends
  setMaxListeners(maxInFlight + batchSize + 16, loop.signal);
  const w: DeliveryWorkerState = {
    s,
    overrides,
    batchSize,
    maxInFlight,
    leaseMs,
    pollMs,
    maxIdleMs,
    owner: newLeaseOwner(),
    loop,
    pool: createPooledSender(),
    rounds: new Set(),
    throttle: new DeliveryThrottle(),
    reserved: new Map(),
    slots: new Slots(() => loop.slotFreed()),
    outcomes: new OutcomeBatcher<Outcome>({
      windowMs: RECORD_WINDOW_MS,
      max: maxInFlight,
      record: (batch) => record(w, batch),
      stopping: () => loop.stopping,
    }),
    lastClaim: 0,
  };
  return {
    owner: w.owner,
    runOnce: () => runOnce(w),
    start() {
      loop.start(
        s.wake.deliveries,
        () => turn(w),
        () => drain(w),
      );
    },
    async stop() {
      await loop.stop(() => w.outcomes.cutShort());
      await Promise.allSettled([...w.rounds]);
      await w.pool.close();
    },
  };
}
