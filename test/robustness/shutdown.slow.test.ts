import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { createWorld } from '../helpers/harness.js';
import { waitFor } from '../webhooks/processes.js';
import { integrityProblems } from './integrity.js';
import { serverDatabase } from './serverProcess.js';
import { rowsOfWrites, sendWrite, succeeded, type SentWrite } from './writeMix.js';

// SIGTERM while REST and MCP writes and webhook deliveries are in flight. The server stops
// accepting, finishes what it started, and exits 0: each request either completed with its normal status or
// was refused before it started (no row at all); no delivery is left in a lease.

const LOOPS = 30;
const RECEIVER_DELAY_MS = 300;

/** A receiver slow enough that deliveries are in flight when the signal comes. */
async function slowReceiver() {
  const sockets = new Set<Socket>();
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      setTimeout(() => res.writeHead(200).end('ok'), RECEIVER_DELAY_MS);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('SIGTERM under load', () => {
  it(
    'finishes in-flight requests, refuses the rest before they start, exits 0 and leaves no delivery in a lease',
    { timeout: 120_000 },
    async () => {
      const rx = await slowReceiver();
      const db = await serverDatabase({ SVC_WEBHOOK_BACKOFF_BASE_MS: '50' });
      try {
        const setup = await db.open();
        const w = await createWorld(setup);
        const { webhook } = await createWebhook(setup.services, {
          roomId: w.roomId,
          url: rx.url,
          createdById: w.owner.id,
        });
        await setup.close();

        const server = await db.start({ SVC_WORKER: 'on' });
        let exited = false;
        const exitCode = server.exited.then((code) => {
          exited = true;
          return code;
        });
        const writes: SentWrite[] = [];
        const startedBeforeSignal = new Set<string>();
        let signalled = false;
        let next = 0;
        let inFlight = 0;
        const loop = async () => {
          while (!exited) {
            const n = next++;
            inFlight++;
            const write = sendWrite(server.base, w.key, w.roomId, n);
            const x = await write;
            inFlight--;
            if (!signalled) startedBeforeSignal.add(x.marker);
            writes.push(x);
            if (!('status' in x.outcome)) await new Promise((r) => setTimeout(r, 20));
          }
        };
        const loops = Array.from({ length: LOOPS }, loop);
        // a delivery recorded as succeeded (not merely received: the receiver answers after a delay, and an
        // attempt still waiting for that answer at the signal is aborted and not counted). Looked up in the database
        // (a runtime of this process on the same database), not on the history's first page: that page shows the
        // newest deliveries, and thirty loops of writes outrun a receiver that takes 300 ms, so on a fast machine
        // the newest 200 are always still waiting while older ones succeed.
        const watch = await db.open();
        const someDelivered = async () =>
          (
            await sql(watch.ds, 'SELECT 1 FROM "webhook_deliveries" WHERE "webhookId" = ? AND "state" = ? LIMIT 1', [
              webhook.id,
              'succeeded',
            ])
          ).rows.length > 0;
        try {
          await waitFor(
            async () => writes.filter(succeeded).length >= 100 && rx.received() > 0 && (await someDelivered()),
            'load and deliveries under way',
          );
        } finally {
          await watch.close();
        }
        const inFlightAtSignal = inFlight;
        signalled = true;
        server.proc.kill('SIGTERM');
        expect(await exitCode).toBe(0);
        await Promise.all(loops);

        expect(inFlightAtSignal).toBeGreaterThan(0);
        // every answer is the operation's normal success: nothing failed half-way with a 5xx or a reset mid-response
        const answered = writes.filter((x) => 'status' in x.outcome);
        expect(answered.filter((x) => !succeeded(x)).map((x) => [x.kind, x.outcome])).toEqual([]);
        // requests sent after the signal were refused at the door
        expect(writes.some((x) => !('status' in x.outcome))).toBe(true);

        const rt = await db.open();
        try {
          const rows = await rowsOfWrites(rt, writes);
          for (const x of writes) {
            const r = rows.get(x.marker)!;
            // completed: one whole row; refused: no row at all (it never started)
            expect(r, `${x.kind} ${x.marker} ${JSON.stringify(x.outcome)}`).toEqual(
              succeeded(x) ? { count: 1, whole: true } : { count: 0, whole: true },
            );
          }
          expect(await integrityProblems(rt)).toEqual([]);
          const leased = await sql<{ n: number }>(
            rt.ds,
            'SELECT COUNT(*) AS "n" FROM "webhook_deliveries" WHERE "leaseOwner" IS NOT NULL OR "leaseUntil" IS NOT NULL',
          );
          expect(Number(leased.rows[0].n)).toBe(0);
          const states = await sql<{ state: string; n: number }>(
            rt.ds,
            'SELECT "state", COUNT(*) AS "n" FROM "webhook_deliveries" GROUP BY "state"',
          );
          // some were delivered before the signal, and some wait for the next start (aborted attempts do not count)
          expect(states.rows.map((r) => r.state).sort()).toContain('succeeded');
          const aborted = await sql<{ n: number }>(
            rt.ds,
            'SELECT COUNT(*) AS "n" FROM "webhook_deliveries" WHERE "state" = ? AND "attempts" > ?',
            ['pending', 0],
          );
          expect(Number(aborted.rows[0].n)).toBe(0);
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
