import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../db/dataSource.js';
import { createApiKey } from '../../src/domain/apiKeys.js';
import { hashPassword } from '../../src/domain/hashing.js';
import { addMemberAsOperator, createRoom } from '../../src/domain/rooms.js';
import type { Scope } from '../../src/domain/scopes.js';
import { createOrganization, createUser } from '../../src/domain/users.js';
import type { OrgRole } from '../../db/entities/index.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { throwawayPostgresDatabase } from './pgDatabase.js';

export interface TestServer {
  baseUrl: string;
  rt: Runtime;
  dataDir: string;
  env: Record<string, string>;
  /** fetch against the server, path relative to baseUrl. */
  fetch(p: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  now?: () => Date;
  /** A postgres URL, or leave unset for a fresh SQLite file. */
  database?: string;
  /** Reuse this data directory (and its SQLite file) and keep it on close: for restart tests. */
  dataDir?: string;
}

/**
 * Starts the real app in-process on a fresh SQLite file and a free port (or on `database`, a postgres URL).
 * Use with `await using` or call close().
 */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer & AsyncDisposable> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const pg = await provisionPostgres(opts.database ?? process.env.TEST_DATABASE_URL, opts.dataDir);
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    BASE_URL: baseUrl,
    LOG_LEVEL: 'silent',
    DATABASE_URL: pg?.url ?? `sqlite:${path.join(dataDir, 'svc.sqlite')}`,
    DATA_DIR: dataDir,
    SVC_SSRF_ALLOWLIST: '127.0.0.1/32,::1/128',
    SVC_WORKER: 'off',
    ...opts.env,
  };
  const config = loadConfig(env);
  if (config.database.kind === 'sqlite') await copyMigratedTemplate(config.database.file);
  const rt = await openRuntime(config, { now: opts.now });
  const app = createApp({ services: rt.services, rateLimiter: rt.rateLimiter });
  server.on('request', app);
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await rt.close();
    if (!opts.dataDir) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await pg?.drop();
    }
  };
  return {
    baseUrl,
    rt,
    dataDir,
    env,
    fetch: (p, init) => fetch(baseUrl + p, { redirect: 'manual', ...init }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

const sharedServers = new Map<string, Promise<TestServer>>();

/**
 * A server shared by the test files of a worker process (isolate: false keeps this module loaded between them),
 * one per `env`, started on first use and kept until the worker exits; its close() does nothing. For tests that
 * reach it only over HTTP with a world of their own (createWorld): never its clock, its data directory, its
 * services, or rows outside that world. Files of a worker run one after another, so nothing else writes meanwhile.
 * On PostgreSQL each call starts a server of its own, closed as usual, so no database outlives the run.
 */
export async function sharedTestServer(
  opts: { env?: Record<string, string> } = {},
): Promise<TestServer & AsyncDisposable> {
  if (process.env.TEST_DATABASE_URL?.startsWith('postgres')) return startTestServer(opts);
  const k = JSON.stringify(opts.env ?? {});
  let started = sharedServers.get(k);
  if (!started) {
    started = startTestServer({ env: opts.env });
    sharedServers.set(k, started);
    const t = await started;
    process.once('exit', () => fs.rmSync(t.dataDir, { recursive: true, force: true }));
  }
  const t = await started;
  const keep = async () => {};
  return { ...t, close: keep, [Symbol.asyncDispose]: keep };
}

let template: Promise<string> | undefined;

/**
 * A new SQLite file starts as a copy of one migrated once per worker process: the server then finds every migration
 * applied, as it would on a restart, instead of running them all again for each test server. A file that exists
 * already (a restart on a kept `dataDir`) is left as it is.
 */
async function copyMigratedTemplate(file: string): Promise<void> {
  if (file === ':memory:' || fs.existsSync(file)) return;
  template ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-template-'));
    const templateFile = path.join(dir, 'svc.sqlite');
    const ds = await openDatabase({ database: { kind: 'sqlite', file: templateFile } });
    await ds.destroy();
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    return templateFile;
  })();
  const from = await template;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.copyFileSync(from, file);
}

/**
 * On PostgreSQL (TEST_DATABASE_URL, set by the `postgres` vitest project) every test server gets a database
 * of its own, created here and dropped on close; a reused `dataDir` maps to the same database (restarts).
 */
async function provisionPostgres(base: string | undefined, dataDir: string | undefined) {
  if (!base || !base.startsWith('postgres')) return null;
  const name = dataDir
    ? `svc_t_${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`
    : `svc_t_${randomBytes(8).toString('hex')}`;
  return throwawayPostgresDatabase(base, name);
}

export interface World {
  orgId: string;
  owner: { id: string; email: string; password: string };
  member: { id: string; email: string; password: string };
  roomId: string;
  /** A direct-message room both users are in. */
  dmRoomId: string;
  /** An org key of the owner holding every scope but agent:invoke. */
  key: string;
  keyId: string;
}

export const ALL_SCOPES: Scope[] = [
  'me:read',
  'organizations:read',
  'rooms:read',
  'rooms:write',
  'messages:read',
  'messages:write',
  'tasks:read',
  'tasks:write',
  'records:read',
  'records:write',
  'files:read',
  'files:write',
  'webhooks:read',
  'webhooks:write',
  'events:read',
  'mcp:tools',
];

let counter = 0;

/**
 * Each role's password, the same for every world of a worker process, hashed once: scrypt is made to be slow, and a
 * world per test would otherwise spend most of its time on it.
 */
const worldPasswords = new Map<string, { password: string; hash: Promise<string> }>();
function worldPassword(who: string) {
  let p = worldPasswords.get(who);
  if (!p) {
    const password = `pw-${who}-secret-${randomBytes(4).toString('hex')}`;
    p = { password, hash: hashPassword(password) };
    worldPasswords.set(who, p);
  }
  return p;
}

/** Creates an organization with an owner and a member, a room with both, a DM room, and an org key. */
export async function createWorld(rt: Runtime, name = 'Acme'): Promise<World> {
  const s = rt.services;
  const now = s.now();
  const n = ++counter;
  const passwords = { owner: worldPassword('owner'), member: worldPassword('member') };
  const hashes = { owner: await passwords.owner.hash, member: await passwords.member.hash };
  return s.ds.transaction(async (m) => {
    const org = await createOrganization(m, now, name);
    const mk = async (who: 'owner' | 'member', role: OrgRole) => {
      const email = `${who}-${n}-${Math.random().toString(36).slice(2, 8)}@example.test`;
      const { password } = passwords[who];
      const passwordHash = hashes[who];
      const u = await createUser(m, now, { email, name: who, password, passwordHash, organizationId: org.id, role });
      return { id: u.id, email, password };
    };
    const owner = await mk('owner', 'owner');
    const member = await mk('member', 'member');
    const room = await createRoom(m, now, {
      name: 'General',
      createdById: owner.id,
      organizationId: org.id,
      memberIds: [member.id],
    });
    const dm = await createRoom(m, now, {
      name: 'DM',
      createdById: owner.id,
      organizationId: org.id,
      roomType: 1,
      memberIds: [member.id],
    });
    const { key, token } = await createApiKey(m, now, {
      userId: owner.id,
      organizationId: org.id,
      name: 'test',
      scopes: ALL_SCOPES,
      mode: 'test',
    });
    return { orgId: org.id, owner, member, roomId: room.id, dmRoomId: dm.id, key: token, keyId: key.id };
  });
}

/** Issues an API key through the domain (as `svc key create` does). */
export async function issueKey(
  rt: Runtime,
  o: { userId: string; organizationId?: string | null; scopes: string[]; mode?: 'live' | 'test' },
): Promise<{ token: string; id: string }> {
  const s = rt.services;
  const { key, token } = await s.ds.transaction((m) =>
    createApiKey(m, s.now(), {
      userId: o.userId,
      organizationId: o.organizationId ?? null,
      name: 'k',
      scopes: o.scopes,
      mode: o.mode ?? 'test',
    }),
  );
  return { token, id: key.id };
}

export async function addToRoom(rt: Runtime, roomId: string, userId: string): Promise<void> {
  await rt.services.ds.transaction((m) => addMemberAsOperator(m, rt.services.now(), roomId, userId));
}

export { createRoom };

/** Adds `count` ordinary rooms (`r0`, `r1` …) to the world's organization, created by its owner, in one transaction. */
export async function addRooms(rt: Runtime, w: World, count: number): Promise<void> {
  const s = rt.services;
  await s.ds.transaction(async (m) => {
    for (let i = 0; i < count; i++)
      await createRoom(m, s.now(), { name: `r${i}`, createdById: w.owner.id, organizationId: w.orgId });
  });
}

/** JSON request helper: returns status, headers and parsed body. */
export async function call(
  t: TestServer,
  method: string,
  p: string,
  o: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  if (o.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await t.fetch(p, {
    method,
    headers,
    body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body };
}
