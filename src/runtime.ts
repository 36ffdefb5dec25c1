import type { DataSource } from 'typeorm';
import { openDatabase } from '../db/dataSource.js';
import { createRateLimiter, type RateLimiter } from './auth/rateLimit.js';
import type { Config } from './config.js';
import type { Services } from './domain/services.js';
import { createLogger } from './logger.js';
import { typeormDriverAccess } from './fastpaths/typeormDriver.js';
import { createMetrics } from './observability/metrics.js';
import { inSpan } from './observability/tracing.js';
import { resolveAccessToken } from './oauth/resolveAccessToken.js';
import { loadServerSecret } from './secret.js';
import { bindEventObservers, EventObservers } from './domain/events.js';
import { createOutboxSignals } from './outbox/wakeSignal.js';
import { registerWebhookOutbox } from './webhooks/outbox.js';

export interface Runtime {
  services: Services;
  rateLimiter: RateLimiter;
  ds: DataSource;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  now?: () => Date;
  /** false: no metrics even when configured (one-shot CLI commands, which serve no scrape). */
  metrics?: boolean;
  /** Retries of a transaction the database refused as busy (`Services.transactionRetries`; the CLI's). */
  transactionRetries?: number;
}

/** Opens the database (applying migrations) and builds what the server, the CLI and tests share. */
export async function openRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const log = createLogger(config.logLevel);
  // db/ reads the driver's connections and opens its spans through what it is given here
  const ds = await openDatabase(config, { driver: typeormDriverAccess, span: inSpan });
  const secret = await loadServerSecret(ds, config.secret);
  const now = opts.now ?? (() => new Date());
  const services: Services = {
    ds,
    config,
    now,
    secret,
    log,
    transactionRetries: opts.transactionRetries,
    resolveAccessToken,
    events: new EventObservers(),
    wake: createOutboxSignals(),
    webhookDelivery: {},
  };
  // the webhook outbox fans every event of this runtime out to delivery rows inside the event's transaction
  registerWebhookOutbox(services);
  bindEventObservers(ds, services.events);
  if (config.metrics && opts.metrics !== false)
    services.metrics = createMetrics({ ds, now, instanceId: config.metrics.instanceId });
  return {
    services,
    rateLimiter: createRateLimiter(ds),
    ds,
    close: async () => {
      if (ds.isInitialized) await ds.destroy();
    },
  };
}
