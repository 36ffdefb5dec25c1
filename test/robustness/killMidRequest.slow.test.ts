import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { ORPHAN_GRACE_MS } from '../../src/domain/files.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { DELIVERED_EVENT_TYPES } from '../../src/webhooks/outbox.js';
import { createWorld } from '../helpers/harness.js';
import { waitFor } from '../webhooks/processes.js';
import { integrityProblems } from './integrity.js';
import { serverDatabase } from './serverProcess.js';
import { rowsOfWrites, sendWrite, succeeded, type SentWrite } from './writeMix.js';

// The server killed (SIGKILL: no shutdown code runs) while a batch of writes is in flight and its
// worker is in the middle of deliveries to a slow receiver. Every write the client saw succeed is in the
// database, whole; no write left a partial row; every committed row has its event and its delivery row; after
// a restart the leases of the dead process are claimed again and every committed event reaches the receiver;
// the bytes of uploads cut off before their commit are swept. (test/webhooks/crash.slow.test.ts covers a kill with
// deliveries only pending.)

const IN_FLIGHT = 40;

/** A receiver that records each event id; while `slow`, it answers after half a second (attempts in flight). */
async function recordingReceiver() {
  const ids = new Set<string>();
  const sockets = new Set<Socket>();
  const r = {
    slow: true,
    ids,
    url: '',
    async close() {
      for (const x of sockets) x.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.add(String(req.headers['svc-webhook-id']));
      setTimeout(() => res.writeHead(200).end(), r.slow ? 500 : 0);
    });
  });
  server.on('connection', (x) => {
    sockets.add(x);
    x.on('close', () => sockets.delete(x));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}

describe('the server killed mid-request', () => {
  it(
    'SIGKILL under a batch of writes and deliveries in flight loses no answered write, leaves nothing partial, and delivers every committed event after restart',
    { timeout: 120_000 },
    async () => {
      const rx = await recordingReceiver();
      const db = await serverDatabase();
      try {
        const setup = await db.open();
        const w = await createWorld(setup);
        await createWebhook(setup.services, { roomId: w.roomId, url: rx.url, createdById: w.owner.id });
        await setup.close();

        const server = await db.start({ SVC_WORKER: 'on' });
        const writes: SentWrite[] = [];
        let next = 0;
        let killed = false;
        const loop = async () => {
          while (!killed) writes.push(await sendWrite(server.base, w.key, w.roomId, next++));
        };
        const loops = Array.from({ length: IN_FLIGHT }, loop);
        await waitFor(
          () => writes.filter(succeeded).length >= 150 && rx.ids.size >= 5,
          '150 answered writes and deliveries under way',
        );
        server.proc.kill('SIGKILL');
        killed = true;
        await server.exited;
        await Promise.all(loops);

        const cut = writes.filter((x) => !('status' in x.outcome));
        expect(cut.length, 'writes were in flight at the kill').toBeGreaterThan(0);
        expect(writes.filter((x) => 'status' in x.outcome).every(succeeded)).toBe(true);

        const rt = await db.open();
        try {
          const rows = await rowsOfWrites(rt, writes);
          for (const x of writes) {
            const r = rows.get(x.marker)!;
            // answered: exactly one whole row; cut off: none, or one whole row (committed, answer lost)
            if (succeeded(x)) expect(r, `${x.kind} ${x.marker}`).toEqual({ count: 1, whole: true });
            else
              expect(r.count === 0 || (r.count === 1 && r.whole), `${x.kind} ${x.marker} ${JSON.stringify(r)}`).toBe(
                true,
              );
          }
          // every committed row has its event and its delivery row; the only leftovers a kill may leave are
          // bytes of uploads cut off before their row committed, which no row names and nothing serves …
          const problems = await integrityProblems(rt);
          expect(problems.filter((p) => !p.startsWith('files directory holds '))).toEqual([]);
          // … and which the server sweeps at start once they are an hour old (here: made to look it)
          const filesDir = path.join(db.dataDir, 'files');
          const anHourAgo = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
          for (const name of fs.readdirSync(filesDir)) fs.utimesSync(path.join(filesDir, name), anHourAgo, anHourAgo);

          // the dead worker's leases: its attempts never finished; once the lease time has passed (moved here
          // instead of waiting the 60 s) another worker claims them again
          const leased = await sql(
            rt.ds,
            'UPDATE "webhook_deliveries" SET "leaseUntil" = ? WHERE "leaseOwner" IS NOT NULL RETURNING "id"',
            ['2000-01-01T00:00:00.000Z'],
          );
          expect(leased.rows.length, 'deliveries were in flight at the kill').toBeGreaterThan(0);
          rx.slow = false;

          const events = (
            await sql<{ id: string; type: string }>(rt.ds, 'SELECT "id", "type" FROM "events" WHERE "roomId" = ?', [
              w.roomId,
            ])
          ).rows.filter((e) => DELIVERED_EVENT_TYPES.has(e.type));
          // uploads not attached to a message or task fire no event
          expect(events.length).toBeGreaterThanOrEqual(writes.filter((x) => succeeded(x) && x.kind !== 'file').length);

          // back up with the worker: every committed event arrives
          const again = await db.start({ SVC_WORKER: 'on' });
          try {
            const open = async () =>
              Number(
                (
                  await sql<{ n: number }>(
                    rt.ds,
                    'SELECT COUNT(*) AS "n" FROM "webhook_deliveries" WHERE "state" <> ? OR "leaseOwner" IS NOT NULL',
                    ['succeeded'],
                  )
                ).rows[0].n,
              );
            await waitFor(
              async () => events.every((e) => rx.ids.has(e.id)) && (await open()) === 0,
              'every committed event delivered',
              60_000,
            );
            await waitFor(async () => (await integrityProblems(rt)).length === 0, 'orphaned upload bytes swept');
          } finally {
            expect(await again.stop('SIGTERM')).toBe(0);
          }
          expect(events.filter((e) => !rx.ids.has(e.id))).toEqual([]);
          const pending = await sql<{ n: number }>(
            rt.ds,
            'SELECT COUNT(*) AS "n" FROM "webhook_deliveries" WHERE "state" <> ? OR "leaseOwner" IS NOT NULL',
            ['succeeded'],
          );
          expect(Number(pending.rows[0].n)).toBe(0);
        } finally {
          await rt.close();
        }
      } finally {
        await rx.close();
        await db.remove();
      }
    },
  );
});
