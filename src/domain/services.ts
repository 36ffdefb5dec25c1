import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import type { OutboxSignals } from '../outbox/wakeSignal.js';
import type { EventObservers } from './events.js';
import type { AuthenticatedActor } from './actor.js';

/** What the domain needs from the outside world, passed down explicitly (no singletons). */
export interface Services {
  ds: DataSource;
  config: Config;
  /** Injected clock: tests move time without sleeping. */
  now: () => Date;
  /** Server secret: signs cursors, CSRF tokens and authorization requests. */
  secret: string;
  log: Logger;
  /** Prometheus metrics of this process, when enabled (SVC_METRICS_TOKEN); absent, nothing is recorded. */
  metrics?: Metrics;
  /**
   * How often `inTransaction` retries a transaction the database refused as momentarily busy (a lock held
   * past the busy timeout): 0 in the server (it answers 503 and the client retries), a few in the operator
   * command line, which has no client to retry for it.
   */
  transactionRetries?: number;
  /** This runtime's observers of new events (the webhook outbox), run in the event's transaction. */
  events: EventObservers;
  /** This runtime's "work was committed" signals, which wake its outbox workers. */
  wake: OutboxSignals;
  /**
   * How an OAuth access token (`svc_at_…`) authenticates: to its actor, or null. Set by the runtime from the
   * OAuth area (src/auth knows nothing of src/oauth); on this object, so two runtimes in one process never
   * share it. Absent: access tokens are refused.
   */
  resolveAccessToken?: (s: Services, token: string) => Promise<AuthenticatedActor | null>;
}
