import fs from 'node:fs';
import path from 'node:path';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { entities } from './entities/index.js';
import { setDatabaseHooks, type DatabaseHooks } from './hooks.js';
import { migrations } from './migrations/index.js';
import { guardHeldReads } from './sqliteHeldRead.js';

const MIGRATION_LOCK = 7_264_201;

/**
 * Pages the SQLite WAL may hold before a commit copies them back (SQLite's default is 1,000). The checkpoint
 * runs inside a commit, on the thread that serves requests, and copies each page once however often it was
 * rewritten: the hot pages are rewritten on every write, so a larger mark copies far fewer pages per write.
 */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** SQLite's page cache per connection, in KiB (`cache_size` takes a negative number for KiB). */
const PAGE_CACHE_KIB = 8_000;

/** Where the database is: the configuration's `database` (src/config.ts builds it from `DATABASE_URL`). */
export type DatabaseLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export interface DataSourceOptionsInput {
  database: DatabaseLocation;
}

/** Builds the data source for SQLite (WAL) or PostgreSQL. Never `synchronize`: migrations only. */
export function createDataSource({ database }: DataSourceOptionsInput): DataSource {
  if (database.kind === 'sqlite') {
    if (database.file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(database.file)), { recursive: true });
    return new DataSource({
      type: 'better-sqlite3',
      database: database.file,
      entities,
      migrations,
      synchronize: false,
      migrationsRun: false,
      enableWAL: true,
      timeout: 10_000,
      prepareDatabase: (db: Parameters<typeof guardHeldReads>[0] & { pragma: (s: string) => unknown }) => {
        db.pragma('busy_timeout = 10000');
        db.pragma('foreign_keys = ON');
        // Stated, not left to the build: the WAL is synced at each checkpoint, not at each commit. A crashed
        // process loses nothing committed; a power cut may take back the last commits but never corrupts the
        // file (SQLite's recommended setting for WAL; FULL would sync on every write).
        db.pragma('synchronous = NORMAL');
        // fewer, larger checkpoints (WAL_AUTOCHECKPOINT_PAGES)
        db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
        // half the page cache better-sqlite3's build gives a connection: memory the allocator keeps once
        // filled, while the hot index pages fit many times over and the rest sit in the OS's file cache
        db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
        // the reads of a turn share one read transaction (sqliteHeldRead.ts)
        guardHeldReads(db);
      },
    });
  }
  return new DataSource({
    type: 'postgres',
    url: database.url,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    extra: { max: 10 },
  });
}

/** A node-postgres client, as far as its 'error' event goes. */
interface PgClientEvents {
  on(event: 'error', listener: (err: unknown) => void): void;
}

/** The part of node-postgres's pool that announces each client it hands out. */
interface PgPoolEvents {
  on(event: 'acquire', listener: (client: PgClientEvents) => void): void;
}

/** The clients that have svc's 'error' listener already (a client is handed out many times). */
const heardClients = new WeakSet<PgClientEvents>();
const hearErrors = (client: PgClientEvents): void => {
  if (heardClients.has(client)) return;
  heardClients.add(client);
  client.on('error', () => undefined);
};

/** Opens the data source and applies pending migrations. */
export async function openDatabase(opts: DataSourceOptionsInput, hooks: DatabaseHooks = {}): Promise<DataSource> {
  const ds = createDataSource(opts);
  setDatabaseHooks(ds, hooks);
  await ds.initialize();
  // A connection PostgreSQL ends (a restart, an administrator) while a query holds it emits 'error' on its client;
  // unheard, that ends the process. The query in flight is refused anyway (503), and the pool drops the client.
  // Heard from the client's first hand-out on, so that the clients opened during `initialize` have it too.
  const pool =
    ds.options.type === 'postgres' ? (hooks.driver?.postgresPool(ds) as PgPoolEvents | undefined) : undefined;
  pool?.on('acquire', hearErrors);
  if (ds.options.type !== 'postgres') {
    await ds.runMigrations({ transaction: 'each' });
    return ds;
  }
  // Several processes may start at once on one PostgreSQL: one migrates while the others wait.
  const lock = ds.createQueryRunner();
  await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await ds.runMigrations({ transaction: 'each' });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.release();
  }
  return ds;
}
