import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { pendingBacklog } from '../../db/stores/deliveries.js';
import { driverPostgresPool } from '../fastpaths/typeormDriver.js';

/** Where a request came in: the four surfaces an operator tells apart. */
export type Surface = 'rest' | 'mcp' | 'oauth' | 'pages';

/** The refusals counted by reason (the pipeline's error codes), and a database busy past its timeout. */
const REFUSAL_REASONS = new Set([
  'rate_limited',
  'api_units_exhausted',
  'insufficient_scope',
  'invalid_audience',
  'unauthorized',
  'service_unavailable',
]);

/** How an attempt of a webhook delivery ended: delivered, to be retried, or finally failed. */
export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed';

export interface MetricsOptions {
  ds: DataSource;
  now: () => Date;
  /** The `instance_id` label every series carries (SVC_INSTANCE_ID, else `host:pid`). */
  instanceId: string;
}

const STATUS_CLASSES = ['1xx', '1xx', '2xx', '3xx', '4xx', '5xx'];
const statusClassOf = (status: number) => STATUS_CLASSES[Math.min(5, Math.max(1, Math.floor(status / 100)))];

/** A request's two series for one operation and status class, bound once and reused. */
interface Bound {
  count: { inc(): void };
  duration: { observe(v: number): void };
}

/**
 * The Prometheus metrics of one process (one registry per runtime): requests, refusals, units, webhook
 * deliveries and their backlog, the database pool and Node's own. Labels are bounded: surface, operation
 * (a route template, tool or JSON-RPC method name, or `unmatched`), status class, reason, outcome; never a
 * user, key, room or request id. Recording is cheap: each (surface, operation) pair binds its label children
 * once; the backlog and pool are read only when scraped.
 */
export interface Metrics {
  readonly registry: Registry;
  /** A request ended (its answer was sent). */
  requestEnded(surface: Surface, operation: string, status: number, seconds: number): void;
  /** A request's audit row: its refusal reason and the units it was charged. */
  audited(surface: string, errorCode: string | null, units: number): void;
  /** Audit rows kept in memory while the database cannot take them (`src/auth/audit.ts`). */
  auditPending(rows: number): void;
  /** An audit row dropped: the database was away and the rows kept in memory had reached their bound. */
  auditDropped(): void;
  /** A webhook delivery attempt ended; `commitToReceiptSeconds` when the receiver answered 2xx. */
  deliveryAttempted(outcome: AttemptOutcome, commitToReceiptSeconds: number | null): void;
  /** The text of a scrape. */
  scrape(): Promise<string>;
}

export function createMetrics({ ds, now, instanceId }: MetricsOptions): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ instance_id: instanceId });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'svc_requests_total',
    help: 'Requests answered, by surface, operation and status class',
    registers,
    labelNames: ['surface', 'operation', 'status_class'] as const,
  });
  const duration = new Histogram({
    name: 'svc_request_duration_seconds',
    help: 'Time from the request to the end of its answer',
    registers,
    labelNames: ['surface', 'operation', 'status_class'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  const refusals = new Counter({
    name: 'svc_refusals_total',
    help: 'Requests refused, by surface and reason (the error code)',
    registers,
    labelNames: ['surface', 'reason'] as const,
  });
  const units = new Counter({
    name: 'svc_api_units_charged_total',
    help: 'API units charged (net of refunds), by surface',
    registers,
    labelNames: ['surface'] as const,
  });
  const auditPending = new Gauge({
    name: 'svc_audit_rows_pending',
    help: 'Audit rows kept in memory, in order, until the database takes them again',
    registers,
  });
  const auditDropped = new Counter({
    name: 'svc_audit_rows_dropped_total',
    help: 'Audit rows dropped: the database was away and the rows kept in memory had reached their bound',
    registers,
  });
  const attempts = new Counter({
    name: 'svc_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome; succeeded + failed are the deliveries finished',
    registers,
    labelNames: ['outcome'] as const,
  });
  const commitToReceipt = new Histogram({
    name: 'svc_webhook_commit_to_receipt_seconds',
    help: "From the commit of a delivery (its outbox row) to the receiver's 2xx answer",
    registers,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
  });

  backlogGauges(ds, now, registers);
  if (ds.options.type === 'postgres') poolGauges(ds, registers);

  const bound = new Map<Surface, Map<string, Bound[]>>();
  const bind = (surface: Surface, operation: string, statusClass: string): Bound => ({
    count: requests.labels(surface, operation, statusClass),
    duration: duration.labels(surface, operation, statusClass),
  });
  const boundUnits = new Map<string, { inc(n: number): void }>();

  return {
    registry,
    requestEnded(surface, operation, status, seconds) {
      let ops = bound.get(surface);
      if (!ops) bound.set(surface, (ops = new Map()));
      let byClass = ops.get(operation);
      if (!byClass) ops.set(operation, (byClass = []));
      const c = Math.min(5, Math.max(1, Math.floor(status / 100)));
      const b = (byClass[c] ??= bind(surface, operation, statusClassOf(status)));
      b.count.inc();
      b.duration.observe(seconds);
    },
    audited(surface, errorCode, charged) {
      if (errorCode && REFUSAL_REASONS.has(errorCode)) refusals.inc({ surface, reason: errorCode });
      if (charged > 0) {
        let u = boundUnits.get(surface);
        if (!u) boundUnits.set(surface, (u = units.labels(surface)));
        u.inc(charged);
      }
    },
    auditPending: (rows) => auditPending.set(rows),
    auditDropped: () => auditDropped.inc(),
    deliveryAttempted(outcome, seconds) {
      attempts.inc({ outcome });
      if (seconds !== null) commitToReceipt.observe(Math.max(0, seconds));
    },
    scrape: () => registry.metrics(),
  };
}

/** The outbox backlog's gauges, read once per scrape (both share the query). */
function backlogGauges(ds: DataSource, now: () => Date, registers: Registry[]): void {
  let backlog: Promise<{ pending: number; oldestSeconds: number }> | null = null;
  const readBacklog = () =>
    (backlog ??= pendingBacklog(ds)
      .then((r) => ({
        pending: Number(r?.n ?? 0),
        oldestSeconds: r?.oldest ? Math.max(0, (now().getTime() - new Date(r.oldest).getTime()) / 1000) : 0,
      }))
      .finally(() => setImmediate(() => (backlog = null))));
  new Gauge({
    name: 'svc_webhook_backlog_pending',
    help: 'Webhook deliveries waiting to be sent or retried (the outbox)',
    registers,
    async collect() {
      // (a database that fails the query leaves the gauge as it was: /readyz reports the database)
      if (ds.isInitialized)
        await readBacklog().then(
          (b) => this.set(b.pending),
          () => undefined,
        );
    },
  });
  new Gauge({
    name: 'svc_webhook_backlog_oldest_age_seconds',
    help: 'Age of the oldest pending webhook delivery (0 when none)',
    registers,
    async collect() {
      if (ds.isInitialized)
        await readBacklog().then(
          (b) => this.set(b.oldestSeconds),
          () => undefined,
        );
    },
  });
}

/** The PostgreSQL pool's gauges. */
function poolGauges(ds: DataSource, registers: Registry[]): void {
  const pool = () =>
    driverPostgresPool<{ totalCount: number; idleCount: number; waitingCount: number } | undefined>(ds);
  new Gauge({
    name: 'svc_db_pool_connections',
    help: 'PostgreSQL pool connections by state',
    registers,
    labelNames: ['state'] as const,
    collect() {
      const p = pool();
      if (!p) return;
      this.set({ state: 'total' }, p.totalCount);
      this.set({ state: 'idle' }, p.idleCount);
    },
  });
  new Gauge({
    name: 'svc_db_pool_waiting',
    help: 'Queries waiting for a PostgreSQL pool connection',
    registers,
    collect() {
      const p = pool();
      if (p) this.set(p.waitingCount);
    },
  });
}
