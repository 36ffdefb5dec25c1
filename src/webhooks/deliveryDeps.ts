import type { Services } from '../domain/services.js';
import type { Metrics } from '../observability/metrics.js';
import { DEFAULT_TIMEOUTS, type HttpSender, type SendTimeouts, undiciSender } from './httpSender.js';
import { loadWebhookKey } from './secretBox.js';
import { allowlistOf, type Resolver, type SsrfPolicy, systemResolver } from '../outbound/ssrfGuard.js';

/** What sending a webhook needs from the outside world; tests replace parts of it (no sleeping, no DNS). */
export interface WebhookDeliveryDeps {
  resolver: Resolver;
  sender: HttpSender;
  timeouts: SendTimeouts;
  /** Clock of the sender (timestamps, sunset rule, backoff); defaults to services.now. */
  now: () => Date;
}

/** Everything resolved for one runtime: the deps, the SSRF policy and the secret key. */
export interface ResolvedDeliveryDeps extends WebhookDeliveryDeps {
  policy: SsrfPolicy;
  key: Buffer;
  backoffBaseMs: number;
  /** The runtime's metrics (attempt outcomes, commit-to-receipt), when enabled. */
  metrics?: Metrics;
  /** A webhook failing this long without a success is set inactive (SVC_WEBHOOK_DISABLE_AFTER_HOURS). */
  disableAfterMs: number;
}

declare module '../domain/services.js' {
  interface Services {
    /** What configureWebhookDelivery replaced of this runtime's delivery deps (tests, embedders). */
    webhookDelivery: Partial<WebhookDeliveryDeps>;
  }
}

/**
 * Replaces parts of the delivery deps for one runtime (the resolver, the HTTP sender, the timeouts, the
 * clock), kept on that runtime's services (`Services.webhookDelivery`). Used by tests and by embedders; the SSRF check
 * always runs before the sender.
 */
export function configureWebhookDelivery(s: Services, deps: Partial<WebhookDeliveryDeps>): void {
  Object.assign(s.webhookDelivery, deps);
}

/**
 * The deps of one runtime: `extra` wins over what configureWebhookDelivery set, which wins over
 * `defaultSender` (the worker's keep-alive pool) and the one-shot undici sender.
 */
export function deliveryDepsFor(
  s: Services,
  extra: Partial<WebhookDeliveryDeps> = {},
  defaultSender?: HttpSender,
): ResolvedDeliveryDeps {
  const d = { ...s.webhookDelivery, ...stripUndefined(extra) };
  const resolver = d.resolver ?? systemResolver;
  return {
    resolver,
    sender: d.sender ?? defaultSender ?? undiciSender,
    timeouts: d.timeouts ?? DEFAULT_TIMEOUTS,
    now: d.now ?? s.now,
    policy: { allowlist: allowlistOf(s.config), resolver },
    key: loadWebhookKey(s.config),
    backoffBaseMs: s.config.webhookBackoffBaseMs,
    metrics: s.metrics,
    disableAfterMs: s.config.webhookDisableAfterHours * 3_600_000,
  };
}

const stripUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
