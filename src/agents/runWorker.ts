import type { AgentConnector, AgentRun } from '../../db/entities/index.js';
import {
  anyRunDue,
  anyStarterRevoked,
  awaitRunCompletion,
  countRunAttempt,
  leaseDueRuns,
  releaseRun,
  roomOfRun,
  scheduleRunRetry,
  starterRevoked,
} from '../../db/stores/agentRuns.js';
import { findConnector } from '../../db/stores/connectors.js';
import type { Services } from '../domain/services.js';
import { newLeaseOwner } from '../outbox/leaseOwner.js';
import { Slots } from '../outbox/slots.js';
import { WorkerLoop } from '../outbox/workerLoop.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { deliveryDepsFor, type ResolvedDeliveryDeps, type WebhookDeliveryDeps } from '../webhooks/deliveryDeps.js';
import { backoffMs } from '../webhooks/retryPolicy.js';
import { mintDelegatedToken } from './delegatedToken.js';
import { INVOCATION_RESPONSE_MS, invocationBody, invokeConnector, type InvocationOutcome } from './invokeConnector.js';
import { endRunsOfRevokedStarters, finishRun } from '../domain/runEnd.js';

export interface AgentRunWorkerOptions extends Partial<WebhookDeliveryDeps> {
  services: Services;
  /** Runs claimed per round. */
  batchSize?: number;
  /** Pause between rounds when nothing was due (commits of this process wake it at once). */
  pollMs?: number;
  /** The longest pause an idle worker backs off to (claims that found nothing double it from pollMs). */
  maxIdleMs?: number;
}

export interface AgentRunWorker {
  readonly owner: string;
  /** One round: claim due runs, invoke each once (or fail it past its deadline), record the outcome. */
  runOnce(): Promise<number>;
  start(): void;
  /** Stops claiming, aborts invocations in flight and gives their leases back (those attempts do not count). */
  stop(): Promise<void>;
}

/** How often, at most, a worker looks for live runs whose starting credential no longer stands. */
const REVOKED_SWEEP_MS = 5_000;

/** One worker: its options, its lease owner, its loop and slots, and when it last swept for revoked starters. */
interface RunWorkerState {
  s: Services;
  overrides: Partial<WebhookDeliveryDeps>;
  batchSize: number;
  pollMs: number;
  maxIdleMs: number | undefined;
  owner: string;
  leaseMs: number;
  loop: WorkerLoop;
  slots: Slots;
  lastSweep: number;
}

/** The delivery dependencies of this moment, with timeouts that end an attempt well within its lease. */
function depsNow(w: RunWorkerState): ResolvedDeliveryDeps {
  const d = deliveryDepsFor(w.s, w.overrides);
  // an attempt must end well within its lease (connect + headers + body), or another worker could claim it meanwhile
  const responseMs = Math.max(
    500,
    Math.min(INVOCATION_RESPONSE_MS, Math.floor((w.leaseMs - d.timeouts.connectMs) / 3)),
  );
  return { ...d, timeouts: { connectMs: Math.min(d.timeouts.connectMs, Math.floor(w.leaseMs / 3)), responseMs } };
}

/** Leases the due runs; a read first: an idle poll takes no write lock (SQLite's one writer is the requests' too). */
async function claim(w: RunWorkerState, now: Date): Promise<AgentRun[]> {
  const t = iso(now);
  if (!(await anyRunDue(w.s.ds, t))) return [];
  const until = iso(new Date(now.getTime() + w.leaseMs));
  return inTransaction(w.s, (m) => leaseDueRuns(m, w.owner, t, until, w.batchSize));
}

const logRevoked = (w: RunWorkerState, agentRunId: string) =>
  w.s.log.info({ agentRunId }, 'agent run canceled: the credential that started it no longer stands');

/**
 * Ends the live runs whose starting credential no longer stands, at most every REVOKED_SWEEP_MS: an OAuth
 * token revoked or a delegating user gone (a revoked API key ends its runs itself) would otherwise leave a
 * run awaiting its connector `running` until its deadline. A read first, as in `claim`.
 */
async function sweepRevoked(w: RunWorkerState, now: Date): Promise<void> {
  if (now.getTime() - w.lastSweep < REVOKED_SWEEP_MS) return;
  w.lastSweep = now.getTime();
  if (!(await anyStarterRevoked(w.s.ds))) return;
  const ended = await inTransaction(w.s, (m) => endRunsOfRevokedStarters(m, now));
  for (const agentRunId of ended) logRevoked(w, agentRunId);
}

/** Fails the run (only while this worker holds it). */
const fail = (w: RunWorkerState, runId: string, error: string, lastStatusCode?: number | null) =>
  inTransaction(w.s, (m) =>
    finishRun(m, depsNow(w).now(), runId, { status: 'failed', error, lastStatusCode }, w.owner),
  );

/** Ends the run (`credential_revoked`) when the credential that started it no longer stands; true when it did. */
async function endedForRevokedStarter(w: RunWorkerState, run: AgentRun, now: Date): Promise<boolean> {
  // a read first: the common case (the credential stands) takes no write lock
  if (!(await starterRevoked(w.s.ds, run.id))) return false;
  if ((await inTransaction(w.s, (m) => endRunsOfRevokedStarters(m, now, { runId: run.id }))).length)
    logRevoked(w, run.id);
  return true;
}

type Prepared =
  { gone: true } | { error: string } | { error: undefined; connector: AgentConnector; body: Buffer; attempts: number };

/** Counts the attempt and mints its token in one transaction, before anything is sent. */
function prepareAttempt(w: RunWorkerState, run: AgentRun, now: Date): Promise<Prepared> {
  const { s } = w;
  return inTransaction(s, async (m): Promise<Prepared> => {
    const connector = await findConnector(m, run.connectorId);
    const room = await roomOfRun(m, run.roomId);
    if (!connector || !connector.active || !room)
      return { error: 'connector_inactive: the connector was deactivated or deleted' };
    if (!(await countRunAttempt(m, run.id, w.owner, iso(now)))) return { gone: true };
    const attempted = { ...run, attempts: run.attempts + 1, status: 'running' as const };
    const token = await mintDelegatedToken(m, now, s.config.baseUrl, attempted);
    return {
      error: undefined,
      connector,
      body: invocationBody(attempted, room, token, s.config.baseUrl),
      attempts: attempted.attempts,
    };
  });
}

/** One claimed run: ended, failed past its deadline, left to its connector, or invoked once and recorded. */
async function handle(w: RunWorkerState, run: AgentRun): Promise<void> {
  const deps = depsNow(w);
  const now = deps.now();
  if (await endedForRevokedStarter(w, run, now)) return;
  if (now.getTime() >= Date.parse(run.deadlineAt)) {
    await fail(w, run.id, 'deadline_exceeded: the run did not finish before its deadline');
    return;
  }
  if (run.awaitingCompletion) {
    // not due yet (woken early): leave it to its deadline
    await releaseRun(w.s.ds, run.id, w.owner);
    return;
  }
  const prepared = await prepareAttempt(w, run, now);
  if ('gone' in prepared) return;
  if (prepared.error !== undefined) {
    await fail(w, run.id, prepared.error);
    return;
  }
  let outcome: InvocationOutcome;
  try {
    outcome = await invokeConnector(deps, prepared.connector, prepared.body, run.id, w.loop.signal);
  } catch (err) {
    w.s.log.error(
      { err, agentRunId: run.id },
      'agent run invocation failed unexpectedly; its lease will expire and it is invoked again',
    );
    return;
  }
  await record(w, run, prepared.attempts, outcome);
}

/** Writes what one invocation gave (only while this worker holds the run). */
async function record(w: RunWorkerState, run: AgentRun, attempts: number, outcome: InvocationOutcome): Promise<void> {
  const { s, owner } = w;
  const now = depsNow(w).now();
  const t = iso(now);
  switch (outcome.kind) {
    case 'aborted':
      // stopped mid-attempt: give the lease back, the attempt does not count
      await releaseRun(s.ds, run.id, owner, true);
      return;
    case 'succeeded':
      await inTransaction(s, (m) =>
        finishRun(
          m,
          now,
          run.id,
          { status: 'succeeded', output: outcome.output, lastStatusCode: outcome.statusCode },
          owner,
        ),
      );
      break;
    case 'accepted':
      // the connector finishes it later (complete_agent_run); the worker looks again at the deadline
      await awaitRunCompletion(s.ds, run.id, owner, outcome.statusCode, t);
      w.loop.dueAt(Date.parse(run.deadlineAt));
      break;
    case 'retry': {
      const next = now.getTime() + backoffMs(s.config.webhookBackoffBaseMs, attempts);
      if (attempts >= run.maxAttempts || next >= Date.parse(run.deadlineAt)) {
        await fail(
          w,
          run.id,
          `connector_unreachable: ${outcome.error} (after ${attempts} attempts)`,
          outcome.statusCode,
        );
      } else {
        await scheduleRunRetry(s.ds, run.id, owner, {
          next: iso(new Date(next)),
          statusCode: outcome.statusCode,
          error: outcome.error,
          now: t,
        });
        w.loop.dueAt(next);
      }
      break;
    }
    case 'failed':
      await fail(w, run.id, outcome.error, outcome.statusCode);
      break;
  }
  s.log.info({ agentRunId: run.id, attempt: attempts, outcome: outcome.kind }, 'agent run invocation');
}

const guarded = (w: RunWorkerState, run: AgentRun) =>
  handle(w, run).catch((err: unknown) =>
    w.s.log.error({ err, agentRunId: run.id }, 'agent run round failed; its lease will expire and it is tried again'),
  );

/** One round: sweep, claim due runs, handle each once. */
async function runOnce(w: RunWorkerState): Promise<number> {
  if (w.loop.stopping) return 0;
  await sweepRevoked(w, depsNow(w).now());
  const runs = await claim(w, depsNow(w).now());
  await Promise.all(runs.map((r) => guarded(w, r)));
  return runs.length;
}

/** One turn of the running loop: claim while fewer than batchSize runs are in flight, idle when none was due. */
async function turn(w: RunWorkerState): Promise<void> {
  w.loop.claiming();
  let got = 0;
  if (w.slots.busy < w.batchSize) {
    try {
      await sweepRevoked(w, depsNow(w).now());
      const runs = await claim(w, depsNow(w).now());
      got = runs.length;
      for (const r of runs) w.slots.occupy(guarded(w, r));
    } catch (err) {
      w.s.log.error({ err }, 'agent run worker round failed');
    }
  }
  if (!got) await w.loop.idle(w.pollMs, 0, w.maxIdleMs);
  else w.loop.worked();
}

/**
 * The invocation worker of agent runs, the webhook outbox's sibling: the `agent_runs` row is
 * written in the request's transaction; a worker claims due runs with a lease (`FOR UPDATE SKIP LOCKED` on
 * PostgreSQL), mints a delegated token and counts the attempt in one transaction, invokes the connector,
 * and records the outcome only while it still holds the lease. A crash mid-invocation loses nothing: the
 * lease expires and the run is invoked once more (at least once; the connector deduplicates on the run id).
 * Retries like webhooks (4 attempts, backoff base/2×/4×, 3xx not followed), and a run not finished by its
 * deadline fails with `deadline_exceeded`. A run whose starting credential no longer stands (a revoked key or
 * token, a delegating user gone from the organization) is canceled, `credential_revoked`, when the worker next
 * handles it or sweeps for such runs.
 */
export function createAgentRunWorker(o: AgentRunWorkerOptions): AgentRunWorker {
  const { services: s, batchSize = 10, pollMs = 200, maxIdleMs, ...overrides } = o;
  const w: RunWorkerState = {
    s,
    overrides,
    batchSize,
    pollMs,
    maxIdleMs,
    owner: newLeaseOwner('run'),
    leaseMs: s.config.agentLeaseMs,
    loop: new WorkerLoop(),
    slots: new Slots(),
    lastSweep: -Infinity,
  };
  return {
    owner: w.owner,
    runOnce: () => runOnce(w),
    start() {
      w.loop.start(
        s.wake.runs,
        () => turn(w),
        () => w.slots.drained(),
      );
    },
    async stop() {
      await w.loop.stop();
    },
  };
}
