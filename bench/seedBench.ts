import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { commands } from '../src/cli/commands/index.js';
import { loadConfig } from '../src/config.js';
import { newId } from '../src/domain/ids.js';
import { SCOPES } from '../src/domain/scopes.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { throwawayPostgresDatabase } from '../test/helpers/pgDatabase.js';

/** What the scenarios need: ids, the API key, and the webhook rooms. */
export interface BenchWorld {
  organizationId: string;
  userId: string;
  /** Rooms list, message writes. */
  roomId: string;
  /** Listing scenario: a room with 1,000 messages and one with `largeMessages`. */
  smallRoomId: string;
  largeRoomId: string;
  /** Message ids at 90% of each listing room: the key of a deep page's cursor. */
  smallDeepKey: string;
  largeDeepKey: string;
  /** Webhook scenario: one webhook (latency at a fixed rate) and `fanout` webhooks (throughput). */
  latencyRoomId: string;
  fanoutRoomId: string;
  apiKey: string;
  /** A task in `roomId` (the PATCH scenario). */
  taskId: string;
  /** Hook number → secret, for the receiver. */
  webhookSecrets: Map<number, string> | null;
  /** Hook number → the same secret in the Standard Webhooks form (`standardSecret` of `svc webhook create`). */
  webhookStandardSecrets: Map<number, string> | null;
}

export interface SeedOptions {
  env: Record<string, string>;
  largeMessages: number;
  /** Extra rooms so that `GET /v1/rooms?limit=50` returns a full page. */
  extraRooms: number;
  /** Receiver URL per hook number; null when webhooks are not available. */
  webhooks: { urlFor(hook: number): string; fanout: number } | null;
}

const SMALL_MESSAGES = 1_000;

/** Runs one operator command in-process (the same code as `npx svc …`). */
async function svc(
  rt: Runtime,
  name: string,
  args: Record<string, string | string[]>,
): Promise<Record<string, unknown>> {
  const cmd = commands.find((c) => c.name === name);
  if (!cmd?.run) throw new Error(`operator command not found: svc ${name}`);
  return cmd.run(args, rt);
}

/** True when the operator CLI can create webhooks (the webhooks area is in place). */
export const webhooksAvailable = () => commands.some((c) => c.name === 'webhook create');

/**
 * Creates the bench data on a fresh database (applying migrations) with the operator commands, then
 * bulk-inserts the listing rooms' messages straight into the `messages` table, in one transaction, with
 * time-ordered `newId('msg', t)` ids as the product makes them, so keyset paging sees what it would see.
 */
export async function seedBench(o: SeedOptions): Promise<BenchWorld> {
  const config = loadConfig(o.env);
  const rt = await openRuntime(config);
  let world: BenchWorld;
  try {
    const org = (await svc(rt, 'org create', { name: 'Bench Org' })).id as string;
    const user = (
      await svc(rt, 'user create', {
        email: 'bench@example.com',
        name: 'Bench User',
        password: 'bench-password-1',
        org,
        role: 'owner',
      })
    ).id as string;
    const room = async (name: string) => (await svc(rt, 'room create', { name, 'created-by': user, org })).id as string;
    const roomId = await room('Bench room');
    for (let i = 0; i < o.extraRooms; i++) await room(`Bench room ${i + 1}`);
    const smallRoomId = await room('Listing 1k');
    const largeRoomId = await room('Listing large');
    const latencyRoomId = await room('Webhook latency');
    const fanoutRoomId = await room('Webhook fan-out');
    const apiKey = (
      await svc(rt, 'key create', {
        user,
        org,
        name: 'bench',
        scopes: SCOPES.join(','),
        mode: 'test',
      })
    ).token as string;
    let webhookSecrets: Map<number, string> | null = null;
    let webhookStandardSecrets: Map<number, string> | null = null;
    if (o.webhooks) {
      webhookSecrets = new Map();
      webhookStandardSecrets = new Map();
      const create = async (hook: number, roomOf: string) => {
        const r = await svc(rt, 'webhook create', { room: roomOf, url: o.webhooks!.urlFor(hook), 'created-by': user });
        webhookSecrets!.set(hook, r.secret as string);
        if (typeof r.standardSecret === 'string') webhookStandardSecrets!.set(hook, r.standardSecret);
      };
      await create(0, latencyRoomId);
      for (let i = 1; i <= o.webhooks.fanout; i++) await create(i, fanoutRoomId);
    }
    world = {
      organizationId: org,
      userId: user,
      roomId,
      smallRoomId,
      largeRoomId,
      latencyRoomId,
      fanoutRoomId,
      apiKey,
      webhookSecrets,
      webhookStandardSecrets,
      smallDeepKey: '',
      largeDeepKey: '',
      taskId: newId('task'),
    };
  } finally {
    await rt.close();
  }
  const now = new Date().toISOString();
  const task = [world.taskId, world.roomId, 'Bench task', '', 'todo', world.userId, now, now];
  const TASK_INSERT =
    'INSERT INTO "tasks" ("id", "roomId", "title", "description", "status", "createdById", "createdAt", "updatedAt") VALUES ';
  if (config.database.kind === 'postgres') {
    const c = new pg.Client({ connectionString: config.database.url });
    await c.connect();
    try {
      await c.query(`${TASK_INSERT}($1, $2, $3, $4, $5, $6, $7, $8)`, task);
      world.smallDeepKey = await insertMessagesPg(c, world.smallRoomId, world.userId, SMALL_MESSAGES);
      world.largeDeepKey = await insertMessagesPg(c, world.largeRoomId, world.userId, o.largeMessages);
      await c.query('VACUUM ANALYZE "messages"');
    } finally {
      await c.end();
    }
    return world;
  }
  const db = new Database(config.database.file);
  try {
    db.pragma('journal_mode = WAL');
    db.prepare(`${TASK_INSERT}(?, ?, ?, ?, ?, ?, ?, ?)`).run(...task);
    world.smallDeepKey = insertMessages(db, world.smallRoomId, world.userId, SMALL_MESSAGES);
    world.largeDeepKey = insertMessages(db, world.largeRoomId, world.userId, o.largeMessages);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return world;
}

/** The messages of `insertMessages` on PostgreSQL: 10,000 rows per `INSERT … SELECT FROM unnest(…)`. */
async function insertMessagesPg(c: pg.Client, roomId: string, authorId: string, count: number): Promise<string> {
  const start = Date.now() + 1;
  const deepAt = Math.floor(count * 0.9);
  let deepKey = '';
  await c.query('BEGIN');
  for (let from = 0; from < count; from += 10_000) {
    const ids: string[] = [];
    const bodies: string[] = [];
    const times: string[] = [];
    for (let i = from; i < Math.min(count, from + 10_000); i++) {
      const t = start + Math.floor(i / 100);
      const id = newId('msg', t);
      if (i === deepAt) deepKey = id;
      ids.push(id);
      bodies.push(`Bench message ${i + 1}`);
      times.push(new Date(t).toISOString());
    }
    await c.query(
      'INSERT INTO "messages" ("id", "roomId", "authorId", "postedBy", "body", "createdAt") ' +
        "SELECT u.id, $4, $5, 'app', u.body, u.at FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, body, at)",
      [ids, bodies, times, roomId, authorId],
    );
  }
  await c.query('COMMIT');
  return deepKey;
}

/**
 * A database of its own on the PostgreSQL server `base` names (BENCH_DATABASE_URL), for one bench run:
 * its URL, and `drop` for the end of the run.
 */
export async function provisionBenchPostgres(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  return throwawayPostgresDatabase(base, `svc_bench_${randomBytes(6).toString('hex')}`);
}

/** Inserts `count` messages, 100 per millisecond of id time; returns the id at 90% (a deep page's key). */
function insertMessages(db: Database.Database, roomId: string, authorId: string, count: number): string {
  const insert = db.prepare(
    'INSERT INTO "messages" ("id", "roomId", "authorId", "postedBy", "body", "createdAt") VALUES (?, ?, ?, ?, ?, ?)',
  );
  const start = Date.now() + 1;
  let deepKey = '';
  const deepAt = Math.floor(count * 0.9);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const t = start + Math.floor(i / 100);
      const id = newId('msg', t);
      if (i === deepAt) deepKey = id;
      insert.run(id, roomId, authorId, 'app', `Bench message ${i + 1}`, new Date(t).toISOString());
    }
  })();
  return deepKey;
}
