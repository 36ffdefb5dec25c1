import path from 'node:path';
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
    .refine((v) => v.split(',').map((o) => o.trim()).filter(Boolean).every(isOrigin), {
      message: 'SVC_MCP_ALLOWED_ORIGINS must be comma-separated origins like https://app.example.com',
    }),
  SVC_WORKER: z.enum(['on', 'off']).optional().default('on'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
});

export interface PlanLimits {
  /** Requests per 60 s window per subject (spec 8). */
  rateLimit: number;
  /** API units per billing entity per UTC month (spec 8). */
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
  webhookBackoffBaseMs: number;
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
  worker: boolean;
  logLevel: string;
}

/** Thrown with a precise, human-readable message when the environment holds a bad value. */
export class ConfigError extends Error {}

/** Reads the configuration once from `env` (CONTRACT §1). Throws ConfigError naming every bad variable. */
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
    ssrfAllowlist: e.SVC_SSRF_ALLOWLIST.split(',').map((s) => s.trim()).filter(Boolean),
    webhookBackoffBaseMs: e.SVC_WEBHOOK_BACKOFF_BASE_MS,
    webhookKey: e.SVC_WEBHOOK_KEY ? Buffer.from(e.SVC_WEBHOOK_KEY, 'base64') : undefined,
    plans: { default: { rateLimit: e.SVC_RATE_LIMIT, monthlyUnits: e.SVC_MONTHLY_UNITS } },
    maxUploadBytes: e.SVC_MAX_UPLOAD_BYTES,
    bodyTimeoutMs: e.SVC_BODY_TIMEOUT_MS,
    maxPendingBodies: e.SVC_MAX_PENDING_BODIES,
    mcpAllowedOrigins: e.SVC_MCP_ALLOWED_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean).map((o) => new URL(o).origin),
    worker: e.SVC_WORKER === 'on',
    logLevel: e.LOG_LEVEL,
  };
}
