import http, { type Server } from 'node:http';
import net from 'node:net';
import { purgeAudit } from './auth/audit.js';
import { purgeExpiredIdempotency } from './auth/idempotency.js';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { purgeExpiredOAuth } from './oauth/purgeExpiredOAuth.js';
import { openRuntime } from './runtime.js';
import { seedDemoData } from './seed.js';
import { sweepOrphanedUploads } from './domain/files.js';
import { purgeExpiredWebSessions } from './domain/webSessions.js';
import { deliveryDepsFor } from './webhooks/deliveryDeps.js';
import { purgeWebhookAttempts } from './webhooks/attemptLog.js';
import { createWebhookWorker } from './webhooks/deliveryWorker.js';
import { createAgentRunWorker } from './agents/runWorker.js';
import { CONNECTION_HEADER } from './http/headers.js';
import type { Services } from './domain/services.js';

const DAY_MS = 24 * 60 * 60 * 1000;

async function main(): Promise<void> {
  const config = configOrExit();
  // a port already taken fails the start before anything is written (the demo data is seeded, and its key
  // printed, only by a start that will serve it)
  const portProblem = await probePort(config.port, config.host);
  if (portProblem) {
    process.stderr.write(`svc failed to start: ${portProblem}\n`);
    process.exit(1);
  }
  // the OpenTelemetry SDK is loaded only when OTEL_* asks for traces (config.ts, tracingWanted)
  const stopTracing = config.tracing ? await (await import('./observability/startTracing.js')).startTracing() : null;
  const runtime = await openRuntime(config);
  const { services } = runtime;
  const log = services.log;

  if (config.env !== 'production') await announceDemo(services, config.baseUrl);

  // fail fast on a bad SVC_SSRF_ALLOWLIST or an unreadable webhook key file
  deliveryDepsFor(services);
  // Node's own bounds on slow clients, behind the app's (readLimited.ts): headers within the body deadline (or
  // 60 s), and a whole request, body included, cut off shortly after the deadline the app answers 408 at
  const app = createApp({ services, rateLimiter: runtime.rateLimiter });
  const server: Server = http.createServer(
    {
      headersTimeout: Math.min(60_000, config.bodyTimeoutMs),
      requestTimeout: config.bodyTimeoutMs + 5_000,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.bodyTimeoutMs / 2))),
    },
    app,
  );
  server.listen(config.port, config.host);
  let stopping = false;
  // once stopping, every response closes its connection, so keep-alive clients cannot hold the server open
  server.prependListener('request', (_req, res) => {
    if (stopping) res.setHeader(CONNECTION_HEADER, 'close');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(listenProblem(err, config.port, config.host))),
    );
  });
  log.info(
    {
      url: config.baseUrl,
      host: config.host,
      port: config.port,
      database: config.database.kind,
      metrics: !!services.metrics,
      tracing: config.tracing,
    },
    'svc listening',
  );
  if (config.loopbackOutbound)
    log.info(
      'development setup: webhooks and connectors on this machine (loopback) are allowed; production refuses them',
    );

  // The webhook delivery worker, in-process unless SVC_WORKER=off (then `svc worker` runs it alone).
  const worker = config.worker ? createWebhookWorker({ services }) : null;
  worker?.start();
  if (worker) log.info({ owner: worker.owner }, 'webhook worker started');
  // agent run invocations: the same outbox pattern, run beside the webhook worker
  const runWorker = config.worker ? createAgentRunWorker({ services }) : null;
  runWorker?.start();

  const timer = startHousekeeping(services, config.dataDir);

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    clearInterval(timer);
    // stop claiming deliveries; attempts in flight are aborted and their leases given back
    const workerStopped = Promise.all([worker?.stop(), runWorker?.stop()]);
    // MCP subscription streams never finish on their own: each gets its graceful end before the server closes
    await app.closeStreams();
    // stop accepting, let in-flight requests finish, and close each keep-alive socket once it is idle
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => server.closeAllConnections(), 10_000);
    force.unref();
    await closed;
    clearInterval(idle);
    await workerStopped;
    await runtime.close();
    await stopTracing?.().catch((err: unknown) => log.error({ err }, 'flushing traces failed'));
    log.info('stopped');
    process.exit(0);
  };
  const stopOn = (signal: string) => () => {
    shutdown(signal).catch((err: unknown) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', stopOn('SIGTERM'));
  process.on('SIGINT', stopOn('SIGINT'));
}

/** The configuration from the environment, or the process ends with the reason. */
function configOrExit(): Config {
  try {
    // `npm start -- --no-worker` serves without delivering webhooks (run `svc worker` elsewhere)
    const noWorker = process.argv.slice(2).includes('--no-worker');
    return loadConfig(noWorker ? { ...process.env, SVC_WORKER: 'off' } : process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
}

/** Seeds the demo data into an empty database and prints how to use it. */
async function announceDemo(services: Services, baseUrl: string): Promise<void> {
  const demo = await seedDemoData(services);
  if (demo) {
    process.stdout.write(
      [
        '',
        'Demo data created (empty database):',
        `  organization  ${demo.organizationId}`,
        `  user          ${demo.userId}  ${demo.email} / password: ${demo.password}`,
        `  room          ${demo.roomId}`,
        `  API key       ${demo.apiKey}  (test mode, shown once)`,
        '',
        'Try it:',
        `  curl -H "Authorization: Bearer ${demo.apiKey}" ${baseUrl}/v1/rooms`,
        '',
      ].join('\n'),
    );
  }
}

/**
 * Housekeeping: audit retention (7 years), expired idempotency keys, OAuth rows and sessions, webhook attempt
 * records past SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS, daily; bytes of uploads a crash cut off before their row
 * committed, at start and daily. Returns the daily timer.
 */
function startHousekeeping(services: Services, dataDir: string): NodeJS.Timeout {
  const log = services.log;
  const sweepUploads = async () => {
    try {
      const orphans = await sweepOrphanedUploads(services.ds.manager, dataDir, services.now());
      if (orphans) log.info({ orphanedUploadsRemoved: orphans }, 'removed bytes of unfinished uploads');
    } catch (err) {
      log.error({ err }, 'sweeping unfinished uploads failed');
    }
  };
  const housekeeping = async () => {
    try {
      const audit = await purgeAudit(services);
      const keys = await purgeExpiredIdempotency(services);
      const oauth = await purgeExpiredOAuth(services);
      const attempts = await purgeWebhookAttempts(services);
      const sessions = await purgeExpiredWebSessions(services);
      log.info(
        {
          auditDeleted: audit,
          idempotencyDeleted: keys,
          oauthDeleted: oauth,
          webhookAttemptsDeleted: attempts,
          sessionsDeleted: sessions,
        },
        'housekeeping done',
      );
    } catch (err) {
      log.error({ err }, 'housekeeping failed');
    }
    await sweepUploads();
  };
  sweepUploads().catch(() => undefined); // (it logs its own failures)
  const timer = setInterval(() => {
    housekeeping().catch(() => undefined); // (it logs its own failures)
  }, DAY_MS);
  timer.unref();
  return timer;
}

/** A listen error as one line that says what to do: a port in use or not allowed; else the error's own words. */
function listenProblem(err: NodeJS.ErrnoException, port: number, host: string): string {
  if (err.code === 'EADDRINUSE')
    return `port ${port} on ${host} is already in use (another svc?): stop it, or set PORT, e.g. PORT=${port + 1} npm start`;
  if (err.code === 'EACCES')
    return `not allowed to listen on port ${port} on ${host}: set PORT to a port above 1023, e.g. PORT=3000 npm start`;
  if (err.code === 'EADDRNOTAVAIL')
    return `HOST ${host} is not an address of this machine: set HOST, e.g. HOST=127.0.0.1`;
  return err.message;
}

/** Binds the port for a moment: the reason it cannot be served on, or null. */
async function probePort(port: number, host: string): Promise<string | null> {
  const probe = net.createServer();
  return new Promise((resolve) => {
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(listenProblem(err, port, host)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

main().catch((err) => {
  process.stderr.write(`svc failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
