import fs from 'node:fs';
import path from 'node:path';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { entities } from './entities/index.js';
import { setDatabaseHooks, type DatabaseHooks } from './hooks.js';
import { migrations } from './migrations/index.js';

const MIGRATION_LOCK = 7_264_201;

/**
 * Pages the SQLite WAL may hold before a commit copies them back into the database file (SQLite's default:
 * 1,000, about 4 MB). The checkpoint runs inside the commit that crosses the mark, on the one thread that
 * serves requests, and copies each page once however often it was rewritten since the last one: the
 * service's hot pages (the audit, rate-limit and message index leaves) are rewritten on every write, so a
 * larger mark copies far fewer pages per write. The WAL file grows to about 40 MB before it is reset.
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
      prepareDatabase: (db: { pragma: (s: string) => unknown }) => {
        db.pragma('busy_timeout = 10000');
        db.pragma('foreign_keys = ON');
        // Stated, not left to the build: better-sqlite3 compiles SQLite with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1,
        // so in WAL mode a commit writes its frames to the WAL file and the WAL is synced to disk at each
        // checkpoint, not at each commit. A crash of the process loses nothing committed and a power cut
        // never corrupts the database, but it can take back the last commits before the checkpoint
        // (SQLite's recommended setting for WAL; FULL would sync on every commit: ~150-250 µs of the one
        // thread's time per write here, bench/README.md).
        db.pragma('synchronous = NORMAL');
        // WAL checkpoints every WAL_AUTOCHECKPOINT_PAGES instead of SQLite's 1,000 (bench/README.md, issue 23)
        db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
        // SQLite's page cache: 8 MB, not the 16 MB better-sqlite3's build gives every connection (malloc'd
        // memory the allocator keeps once filled; the hot index pages fit many times over, the rest are in
        // the OS's file cache). Issue 23's RSS target, bench/README.md.
        db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
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

/** Opens the data source and applies pending migrations (CONTRACT §1: migrations applied at start). */
export async function openDatabase(opts: DataSourceOptionsInput, hooks: DatabaseHooks = {}): Promise<DataSource> {
  const ds = createDataSource(opts);
  setDatabaseHooks(ds, hooks);
  await ds.initialize();
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
