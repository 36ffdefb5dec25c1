import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { startTestServer } from '../helpers/harness.js';

// /readyz is 200 only when the database answers and its migrations are this code's; /healthz
// only says the process is up.

async function readyz(t: { fetch(p: string): Promise<Response> }) {
  const res = await t.fetch('/readyz');
  return { status: res.status, body: await res.json(), cacheControl: res.headers.get('cache-control') };
}

describe('readiness: /readyz', () => {
  it('answers 200 ready when the database answers and every migration is applied', async () => {
    await using t = await startTestServer();
    expect(await readyz(t)).toEqual({ status: 200, body: { status: 'ready' }, cacheControl: 'no-store' });
  });

  it('answers 503 migrations_pending when the database lacks the newest migration', async () => {
    await using t = await startTestServer();
    const newest = t.rt.ds.migrations.at(-1)!.name!;
    await sql(t.rt.ds, 'DELETE FROM "migrations" WHERE "name" = ?', [newest]);
    expect(await readyz(t)).toEqual({
      status: 503,
      body: { status: 'unavailable', reason: 'migrations_pending' },
      cacheControl: 'no-store',
    });
    expect((await t.fetch('/healthz')).status).toBe(200);
  });

  it('answers 503 migrations_unreadable when there is no migrations table', async () => {
    await using t = await startTestServer();
    await sql(t.rt.ds, 'DROP TABLE "migrations"');
    expect((await readyz(t)).body).toEqual({ status: 'unavailable', reason: 'migrations_unreadable' });
  });

  it('answers 503 database_unreachable once the database is closed, while /healthz stays 200', async () => {
    await using t = await startTestServer();
    await t.rt.ds.destroy();
    expect(await readyz(t)).toEqual({
      status: 503,
      body: { status: 'unavailable', reason: 'database_unreachable' },
      cacheControl: 'no-store',
    });
    expect((await t.fetch('/healthz')).status).toBe(200);
  });
});
