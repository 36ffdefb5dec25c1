import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const intFrom = (name: string, def: number, min = 0) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      if (!/^\d+$/.test(v) || Number(v) < min) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer >= ${min}, got ${JSON.stringify(v)}` });
        return z.NEVER;
      }
      return Number(v);
    });

/** `scheme://host[:port]` and nothing else (an Origin header's form). */
function isOrigin(v: string): boolean {
  try {
    const u = new URL(v);
    return /^https?:$/.test(u.protocol) && u.origin === v.replace(/\/$/, '');
  } catch {
    return false;
  }
}

/** Names proxy-addr (Express's `trust proxy`) knows for address ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** `10.0.0.1`, `10.0.0.0/8`, `fd00::/8` or a range name: one entry of SVC_TRUST_PROXY's list. */
function isProxyEntry(v: string): boolean {
  if (PROXY_RANGE_NAMES.includes(v)) return true;
  const [addr, prefix, extra] = v.split('/');
  const family = isIP(addr);
  if (!family || extra !== undefined) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** Which peers' `X-Forwarded-For` is believed: false (none), a hop count, or addresses/ranges of proxies. */
export type TrustProxy = false | number | string[];

/**
 * SVC_TRUST_PROXY: unset, empty, `off` or `0` trust no proxy (the client address is the
 * connection's); a hop count `N` trusts the N nearest proxies; otherwise a comma-separated list of proxy
 * addresses, CIDR ranges and the names `loopback`, `linklocal`, `uniquelocal`. `true`/`on` (trust every
 * hop, so anyone can name their own address) is refused.
 */
const trustProxyFrom = z
  .string()
  .optional()
  .transform((v, ctx): TrustProxy => {
    const s = (v ?? '').trim();
    if (s === '' || s === 'off' || s === 'false' || s === '0') return false;
    if (/^\d+$/.test(s)) return Number(s);
    const list = s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const bad = list.filter((x) => !isProxyEntry(x));
    if (bad.length || !list.length) {
      ctx.addIssue({
        code: 'custom',
        message: `SVC_TRUST_PROXY must be off, a hop count, or comma-separated proxy addresses, CIDRs or loopback/linklocal/uniquelocal; got ${JSON.stringify(v)}`,
      });
      return z.NEVER;
    }
    return list;
  });

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).optional().default('development'),
  PORT: intFrom('PORT', 3000),
  HOST: z.string().min(1).optional().default('127.0.0.1'),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z
    .string()
    .optional()
    .default('sqlite:./data/svc.sqlite')
    .refine((v) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(v), {
      message: 'DATABASE_URL must be sqlite:<path> or postgres://…',
    }),
  DATA_DIR: z.string().min(1).optional(),
  SVC_SECRET: z.string().min(32, 'SVC_SECRET must be at least 32 characters').optional(),
  SVC_SSRF_ALLOWLIST: z.string().optional().default(''),
  SVC_WEBHOOK_BACKOFF_BASE_MS: intFrom('SVC_WEBHOOK_BACKOFF_BASE_MS', 2000, 1),
  SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS: intFrom('SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS', 30, 1),
  SVC_WEBHOOK_DISABLE_AFTER_HOURS: intFrom('SVC_WEBHOOK_DISABLE_AFTER_HOURS', 72, 1),
  SVC_WEBHOOK_KEY: z
    .string()
    .optional()
    .refine((v) => !v || (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32), {
      message: 'SVC_WEBHOOK_KEY must be 32 bytes in base64',
    }),
  SVC_RATE_LIMIT: intFrom('SVC_RATE_LIMIT', 600, 1),
  SVC_MONTHLY_UNITS: intFrom('SVC_MONTHLY_UNITS', 100_000, 0),
  SVC_MAX_UPLOAD_BYTES: intFrom('SVC_MAX_UPLOAD_BYTES', 10 * 1024 * 1024, 1),
  SVC_BODY_TIMEOUT_MS: intFrom('SVC_BODY_TIMEOUT_MS', 30_000, 100),
  SVC_MAX_PENDING_BODIES: intFrom('SVC_MAX_PENDING_BODIES', 64, 1),
  SVC_MCP_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .default('')
    .refine(
      (v) =>
        v
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean)
          .every(isOrigin),
      {
        message: 'SVC_MCP_ALLOWED_ORIGINS must be comma-separated origins like https://app.example.com',
      },
    ),
  SVC_MCP_MAX_STREAMS: intFrom('SVC_MCP_MAX_STREAMS', 8, 1),
  SVC_MCP_MAX_STREAMS_PER_USER: intFrom('SVC_MCP_MAX_STREAMS_PER_USER', 16, 1),
  SVC_MCP_MAX_STREAMS_PER_ORG: intFrom('SVC_MCP_MAX_STREAMS_PER_ORG', 500, 1),
  SVC_WORKER: z.enum(['on', 'off']).optional().default('on'),
  SVC_AGENT_RUN_DEADLINE_MS: intFrom('SVC_AGENT_RUN_DEADLINE_MS', 15 * 60_000, 1000),
  SVC_AGENT_LEASE_MS: intFrom('SVC_AGENT_LEASE_MS', 90_000, 1000),
  SVC_TRUST_PROXY: trustProxyFrom,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  SVC_METRICS_TOKEN: z
    .string()
    .optional()
    .refine((v) => !v || /^[\x21-\x7e]{16,256}$/.test(v), {
      message: 'SVC_METRICS_TOKEN must be 16-256 printable characters without spaces',
    }),
  SVC_METRICS_PORT: intFrom('SVC_METRICS_PORT', 0),
  SVC_INSTANCE_ID: z
    .string()
    .optional()
    .refine((v) => !v || /^[A-Za-z0-9._:-]{1,64}$/.test(v), {
      message: 'SVC_INSTANCE_ID must be 1-64 letters, digits, ".", "_", ":" or "-"',
    }),
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
});

/** The environment variables the configuration reads: the guides must document each one, and name no other. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/**
 * OpenTelemetry traces are on when an OTLP endpoint is named (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or `OTEL_TRACES_EXPORTER=otlp`, unless `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. The exporter itself reads the other standard `OTEL_*` variables.
 */
function tracingWanted(e: {
  OTEL_SDK_DISABLED?: string;
  OTEL_TRACES_EXPORTER?: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
}): boolean {
  if (e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (e.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return (
    exporters.includes('otlp') ||
    !!e.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ||
    !!e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  );
}

export interface PlanLimits {
  /** Requests per 60 s window per subject. */
  rateLimit: number;
  /** API units per billing entity per UTC month. */
  monthlyUnits: number;
}

export interface Config {
  env: 'development' | 'test' | 'production';
  port: number;
  host: string;
  baseUrl: string;
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };
  dataDir: string;
  /** Server secret from the environment; when absent one is generated and kept in the database. */
  secret: string | undefined;
  ssrfAllowlist: string[];
  /**
   * The development setup: loopback receivers, connectors and client metadata documents pass the SSRF guard
   * without SVC_SSRF_ALLOWLIST (see developmentSetup).
   */
  loopbackOutbound: boolean;
  webhookBackoffBaseMs: number;
  /** Days webhook attempt records are kept (SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS, default 30). */
  webhookAttemptRetentionDays: number;
  /**
   * Hours of failed deliveries only after which a webhook is set inactive (SVC_WEBHOOK_DISABLE_AFTER_HOURS, default
   * 72).
   */
  webhookDisableAfterHours: number;
  /** AES-256-GCM key for webhook secrets at rest (SVC_WEBHOOK_KEY); absent: a key file generated in dataDir. */
  webhookKey: Buffer | undefined;
  plans: Record<string, PlanLimits>;
  maxUploadBytes: number;
  /** SVC_BODY_TIMEOUT_MS: time a client has, from its request's arrival, to send the whole body (else 408). */
  bodyTimeoutMs: number;
  /** SVC_MAX_PENDING_BODIES: request bodies one client address may be sending at once (more: 429, closed). */
  maxPendingBodies: number;
  /** Browser origins besides BASE_URL's that may call /mcp (SVC_MCP_ALLOWED_ORIGINS; MCP DNS-rebinding check). */
  mcpAllowedOrigins: string[];
  /** Open MCP `subscriptions/listen` streams one credential may hold, over every process (SVC_MCP_MAX_STREAMS). */
  mcpMaxStreams: number;
  /** … one person, whichever credentials they use (SVC_MCP_MAX_STREAMS_PER_USER). */
  mcpMaxStreamsPerUser: number;
  /** … one organization, whoever holds them (SVC_MCP_MAX_STREAMS_PER_ORG). */
  mcpMaxStreamsPerOrganization: number;
  worker: boolean;
  /**
   * An agent run not finished this long after its creation fails; its delegated token expires then
   * (SVC_AGENT_RUN_DEADLINE_MS, default 15 min).
   */
  agentRunDeadlineMs: number;
  /**
   * How long a worker's claim on a run's invocation holds (SVC_AGENT_LEASE_MS, default 90 s): a crashed holder's run is
   * invoked again after it.
   */
  agentLeaseMs: number;
  /** Whose `X-Forwarded-For` names the client (SVC_TRUST_PROXY): Express's `trust proxy` setting. */
  trustProxy: TrustProxy;
  logLevel: string;
  /**
   * Prometheus metrics (`/metrics`), on when SVC_METRICS_TOKEN is set: the bearer token a scrape must
   * present, the port `svc worker` serves them on (SVC_METRICS_PORT; 0: none) and the `instance_id` label.
   */
  metrics: { token: string; port: number; instanceId: string } | null;
  /** OpenTelemetry traces over OTLP (the standard OTEL_* variables, see tracingWanted). */
  tracing: boolean;
}

/** `localhost`, `127.0.0.1` and the rest of 127.0.0.0/8, `::1`: a name or address only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  return isIP(h) !== 0 && ipaddr.process(h).range() === 'loopback';
}

/**
 * The development setup `npm start` runs with no settings: NODE_ENV `development` (the default; `test` and
 * `production` are not), SQLite, listening on loopback only (HOST) with a loopback BASE_URL and no proxy trusted in
 * front (SVC_TRUST_PROXY off). Only processes on this machine can reach such a server, and they can reach its
 * loopback addresses themselves, so letting it call them (a receiver, a connector) gives no one a new reach. Any
 * one of those settings otherwise (a production server listens beyond loopback or behind a proxy, and names its
 * public BASE_URL) keeps the guard whole.
 */
function developmentSetup(e: z.infer<typeof EnvSchema>, baseUrl: string): boolean {
  return (
    e.NODE_ENV === 'development' &&
    e.DATABASE_URL.startsWith('sqlite:') &&
    e.SVC_TRUST_PROXY === false &&
    isLoopbackHost(e.HOST) &&
    isLoopbackHost(new URL(baseUrl).hostname)
  );
}

/** Thrown with a precise, human-readable message when the environment holds a bad value. */
export class ConfigError extends Error {}

/** Reads the configuration once from `env`. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.NODE_ENV === 'production' && !e.SVC_SECRET) {
    throw new ConfigError('Invalid configuration:\n  SVC_SECRET: required when NODE_ENV=production');
  }
  const baseUrl = (e.BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const database = e.DATABASE_URL.startsWith('sqlite:')
    ? { kind: 'sqlite' as const, file: e.DATABASE_URL.slice('sqlite:'.length) }
    : { kind: 'postgres' as const, url: e.DATABASE_URL };
  const dataDir =
    e.DATA_DIR ?? (database.kind === 'sqlite' && database.file !== ':memory:' ? path.dirname(database.file) : './data');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    baseUrl,
    database,
    dataDir: path.resolve(dataDir),
    secret: e.SVC_SECRET,
    ssrfAllowlist: e.SVC_SSRF_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    loopbackOutbound: developmentSetup(e, baseUrl),
    webhookBackoffBaseMs: e.SVC_WEBHOOK_BACKOFF_BASE_MS,
    webhookAttemptRetentionDays: e.SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS,
    webhookDisableAfterHours: e.SVC_WEBHOOK_DISABLE_AFTER_HOURS,
    webhookKey: e.SVC_WEBHOOK_KEY ? Buffer.from(e.SVC_WEBHOOK_KEY, 'base64') : undefined,
    plans: { default: { rateLimit: e.SVC_RATE_LIMIT, monthlyUnits: e.SVC_MONTHLY_UNITS } },
    maxUploadBytes: e.SVC_MAX_UPLOAD_BYTES,
    bodyTimeoutMs: e.SVC_BODY_TIMEOUT_MS,
    maxPendingBodies: e.SVC_MAX_PENDING_BODIES,
    mcpAllowedOrigins: e.SVC_MCP_ALLOWED_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean)
      .map((o) => new URL(o).origin),
    mcpMaxStreams: e.SVC_MCP_MAX_STREAMS,
    mcpMaxStreamsPerUser: e.SVC_MCP_MAX_STREAMS_PER_USER,
    mcpMaxStreamsPerOrganization: e.SVC_MCP_MAX_STREAMS_PER_ORG,
    worker: e.SVC_WORKER === 'on',
    agentRunDeadlineMs: e.SVC_AGENT_RUN_DEADLINE_MS,
    agentLeaseMs: e.SVC_AGENT_LEASE_MS,
    trustProxy: e.SVC_TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    metrics: e.SVC_METRICS_TOKEN
      ? {
          token: e.SVC_METRICS_TOKEN,
          port: e.SVC_METRICS_PORT,
          instanceId: e.SVC_INSTANCE_ID ?? `${os.hostname()}:${process.pid}`,
        }
      : null,
    tracing: tracingWanted(e),
  };
}
