import { AgentConnector, type AgentRun, Room } from '../../db/entities/index.js';
import { isPostgres, LIMIT_PARAM, sql } from '../../db/sql.js';
import type { Services } from '../domain/services.js';
import { newLeaseOwner } from '../outbox/leaseOwner.js';
import { Slots } from '../outbox/slots.js';
import { WorkerLoop } from '../outbox/workerLoop.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { deliveryDepsFor, type WebhookDeliveryDeps } from '../webhooks/deliveryDeps.js';
import { backoffMs } from '../webhooks/retryPolicy.js';
import { mintDelegatedToken } from './delegatedToken.js';
import { INVOCATION_RESPONSE_MS, invocationBody, invokeConnector, type InvocationOutcome } from './invokeConnector.js';
import { endRunsOfRevokedStarters, finishRun, STARTER_REVOKED } from '../domain/runEnd.js';

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
const ANY_REVOKED = `SELECT ar."id" FROM "agent_runs" ar WHERE ar."status" IN ('queued', 'running') AND ${STARTER_REVOKED} LIMIT 1`;

type RunRow = Omit<AgentRun, 'awaitingCompletion' | 'scopes' | 'input'> & {
  awaitingCompletion: boolean | number;
  scopes: string | string[];
  input: string | AgentRun['input'];
};

const parsed = (r: RunRow): AgentRun =>
  ({
    ...r,
    awaitingCompletion: !!r.awaitingCompletion,
    scopes: typeof r.scopes === 'string' ? (JSON.parse(r.scopes) as string[]) : r.scopes,
    input: typeof r.input === 'string' ? (JSON.parse(r.input) as AgentRun['input']) : r.input,
  }) as AgentRun;

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
  const owner = newLeaseOwner('run');
  const loop = new WorkerLoop();
  const leaseMs = s.config.agentLeaseMs;
  const slots = new Slots();

  const depsNow = () => {
    const d = deliveryDepsFor(s, overrides);
    // an attempt must end well within its lease (connect + headers + body), or another worker could claim it meanwhile
    const responseMs = Math.max(
      500,
      Math.min(INVOCATION_RESPONSE_MS, Math.floor((leaseMs - d.timeouts.connectMs) / 3)),
    );
    return { ...d, timeouts: { connectMs: Math.min(d.timeouts.connectMs, Math.floor(leaseMs / 3)), responseMs } };
  };

  async function claim(now: Date): Promise<AgentRun[]> {
    const t = iso(now);
    // a read first: an idle poll takes no write lock (SQLite has one writer, shared with the requests)
    const due = await sql(
      s.ds,
      'SELECT "id" FROM "agent_runs" WHERE "status" IN (\'queued\', \'running\') AND "nextAttemptAt" <= ? AND ("leaseUntil" IS NULL OR "leaseUntil" <= ?) LIMIT 1',
      [t, t],
    );
    if (!due.rows.length) return [];
    const rows = await inTransaction(s, (m) =>
      sql<RunRow>(
        m,
        'UPDATE "agent_runs" SET "leaseOwner" = ?, "leaseUntil" = ? WHERE "id" IN (' +
          'SELECT "id" FROM "agent_runs" WHERE "status" IN (\'queued\', \'running\') AND "nextAttemptAt" <= ? ' +
          'AND ("leaseUntil" IS NULL OR "leaseUntil" <= ?) ORDER BY "nextAttemptAt", "id" ' +
          LIMIT_PARAM +
          (isPostgres(s.ds) ? ' FOR UPDATE SKIP LOCKED' : '') +
          ') RETURNING *',
        [owner, iso(new Date(now.getTime() + leaseMs)), t, t, batchSize],
      ),
    );
    return rows.rows.map(parsed);
  }

  let lastSweep = -Infinity;
  /**
   * Ends the live runs whose starting credential no longer stands, at most every REVOKED_SWEEP_MS: an OAuth
   * token revoked or a delegating user gone (a revoked API key ends its runs itself) would otherwise leave a
   * run awaiting its connector `running` until its deadline. A read first, as in `claim`.
   */
  async function sweepRevoked(now: Date): Promise<void> {
    if (now.getTime() - lastSweep < REVOKED_SWEEP_MS) return;
    lastSweep = now.getTime();
    if (!(await sql(s.ds, ANY_REVOKED)).rows.length) return;
    const ended = await inTransaction(s, (m) => endRunsOfRevokedStarters(m, now));
    for (const agentRunId of ended)
      s.log.info({ agentRunId }, 'agent run canceled: the credential that started it no longer stands');
  }

  /** Fails the run (only while this worker holds it). */
  const fail = (runId: string, error: string, lastStatusCode?: number | null) =>
    inTransaction(s, (m) => finishRun(m, depsNow().now(), runId, { status: 'failed', error, lastStatusCode }, owner));

  /** Ends the run (`credential_revoked`) when the credential that started it no longer stands; true when it did. */
  async function endedForRevokedStarter(run: AgentRun, now: Date): Promise<boolean> {
    // a read first: the common case (the credential stands) takes no write lock
    if (
      !(await sql(s.ds, `SELECT ar."id" FROM "agent_runs" ar WHERE ar."id" = ? AND ${STARTER_REVOKED}`, [run.id])).rows
        .length
    )
      return false;
    if ((await inTransaction(s, (m) => endRunsOfRevokedStarters(m, now, { runId: run.id }))).length) {
      s.log.info({ agentRunId: run.id }, 'agent run canceled: the credential that started it no longer stands');
    }
    return true;
  }

  async function handle(run: AgentRun): Promise<void> {
    const deps = depsNow();
    const now = deps.now();
    if (await endedForRevokedStarter(run, now)) return;
    if (now.getTime() >= Date.parse(run.deadlineAt)) {
      await fail(run.id, 'deadline_exceeded: the run did not finish before its deadline');
      return;
    }
    if (run.awaitingCompletion) {
      // not due yet (woken early): leave it to its deadline
      await sql(
        s.ds,
        'UPDATE "agent_runs" SET "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "leaseOwner" = ?',
        [run.id, owner],
      );
      return;
    }
    // count the attempt and mint its token in one transaction, before anything is sent
    const prepared = await inTransaction(s, async (m) => {
      const connector = await m.findOneBy(AgentConnector, { id: run.connectorId });
      const room = await m.findOneBy(Room, { id: run.roomId });
      if (!connector || !connector.active || !room)
        return { error: 'connector_inactive: the connector was deactivated or deleted' as string } as const;
      const counted = await sql(
        m,
        'UPDATE "agent_runs" SET "status" = \'running\', "attempts" = "attempts" + 1, "startedAt" = COALESCE("startedAt", ?), "updatedAt" = ? ' +
          'WHERE "id" = ? AND "leaseOwner" = ? AND "status" IN (\'queued\', \'running\')',
        [iso(now), iso(now), run.id, owner],
      );
      if (counted.affected !== 1) return { gone: true } as const;
      const attempted = { ...run, attempts: run.attempts + 1, status: 'running' as const };
      const token = await mintDelegatedToken(m, now, s.config.baseUrl, attempted);
      return {
        error: undefined,
        connector,
        body: invocationBody(attempted, room, token, s.config.baseUrl),
        attempts: attempted.attempts,
      } as const;
    });
    if ('gone' in prepared) return;
    if (prepared.error !== undefined) {
      await fail(run.id, prepared.error);
      return;
    }
    let outcome: InvocationOutcome;
    try {
      outcome = await invokeConnector(deps, prepared.connector, prepared.body, run.id, loop.signal);
    } catch (err) {
      s.log.error(
        { err, agentRunId: run.id },
        'agent run invocation failed unexpectedly; its lease will expire and it is invoked again',
      );
      return;
    }
    await record(run, prepared.attempts, outcome);
  }

  async function record(run: AgentRun, attempts: number, outcome: InvocationOutcome): Promise<void> {
    const now = depsNow().now();
    const t = iso(now);
    switch (outcome.kind) {
      case 'aborted':
        // stopped mid-attempt: give the lease back, the attempt does not count
        await sql(
          s.ds,
          'UPDATE "agent_runs" SET "leaseOwner" = NULL, "leaseUntil" = NULL, "attempts" = "attempts" - 1 WHERE "id" = ? AND "leaseOwner" = ?',
          [run.id, owner],
        );
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
        await sql(
          s.ds,
          `UPDATE "agent_runs" SET "awaitingCompletion" = ${isPostgres(s.ds) ? 'true' : '1'}, "nextAttemptAt" = "deadlineAt", "leaseOwner" = NULL, "leaseUntil" = NULL, ` +
            '"lastStatusCode" = ?, "updatedAt" = ? WHERE "id" = ? AND "leaseOwner" = ? AND "status" = \'running\'',
          [outcome.statusCode, t, run.id, owner],
        );
        loop.dueAt(Date.parse(run.deadlineAt));
        break;
      case 'retry': {
        const next = now.getTime() + backoffMs(s.config.webhookBackoffBaseMs, attempts);
        if (attempts >= run.maxAttempts || next >= Date.parse(run.deadlineAt)) {
          await fail(
            run.id,
            `connector_unreachable: ${outcome.error} (after ${attempts} attempts)`,
            outcome.statusCode,
          );
        } else {
          await sql(
            s.ds,
            'UPDATE "agent_runs" SET "nextAttemptAt" = ?, "leaseOwner" = NULL, "leaseUntil" = NULL, "lastStatusCode" = ?, "error" = ?, "updatedAt" = ? ' +
              'WHERE "id" = ? AND "leaseOwner" = ? AND "status" = \'running\'',
            [iso(new Date(next)), outcome.statusCode, outcome.error, t, run.id, owner],
          );
          loop.dueAt(next);
        }
        break;
      }
      case 'failed':
        await fail(run.id, outcome.error, outcome.statusCode);
        break;
    }
    s.log.info({ agentRunId: run.id, attempt: attempts, outcome: outcome.kind }, 'agent run invocation');
  }

  const guarded = (run: AgentRun) =>
    handle(run).catch((err: unknown) =>
      s.log.error({ err, agentRunId: run.id }, 'agent run round failed; its lease will expire and it is tried again'),
    );

  async function runOnce(): Promise<number> {
    if (loop.stopping) return 0;
    await sweepRevoked(depsNow().now());
    const runs = await claim(depsNow().now());
    await Promise.all(runs.map(guarded));
    return runs.length;
  }

  /** One turn of the running loop: claim while fewer than batchSize runs are in flight, idle when none was due. */
  async function turn(): Promise<void> {
    loop.claiming();
    let got = 0;
    if (slots.busy < batchSize) {
      try {
        await sweepRevoked(depsNow().now());
        const runs = await claim(depsNow().now());
        got = runs.length;
        for (const r of runs) slots.occupy(guarded(r));
      } catch (err) {
        s.log.error({ err }, 'agent run worker round failed');
      }
    }
    if (!got) await loop.idle(pollMs, 0, maxIdleMs);
    else loop.worked();
  }

  return {
    owner,
    runOnce,
    start() {
      loop.start(s.wake.runs, turn, () => slots.drained());
    },
    async stop() {
      await loop.stop();
    },
  };
}
