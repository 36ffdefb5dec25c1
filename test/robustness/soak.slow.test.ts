import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { createWorld } from '../helpers/harness.js';
import { startReceiver } from '../webhooks/helpers.js';
import { waitFor } from '../webhooks/processes.js';
import { integrityProblems } from './integrity.js';
import { attempt, memoryAfterGc, residentBytes, serverDatabase, type Outcome } from './serverProcess.js';
import { sendWrite, succeeded } from './writeMix.js';

// A bounded soak on loopback at a steady rate across REST (reads, writes, uploads), MCP tool
// calls and webhook delivery (the server's own worker to a local receiver). No request fails, every delivery
// succeeds, and from the end of warm-up to the end the server's resident memory (VmRSS) grows by less than
// RSS_GROWTH_BOUND and its V8 heap by less than HEAP_GROWTH_BOUND, both measured after a full garbage
// collection (forced through the inspector on loopback; without it, RSS swings by ~80 MiB with the GC cycle).
// SOAK_SECONDS sets the length (default 60 in the suite; run longer by hand: SOAK_SECONDS=600).

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const REQUESTS_PER_SECOND = 40;
const TICK_MS = 100;
/** Stated bounds: growth between the end of warm-up and the end of the soak, after a full GC. */
const RSS_GROWTH_BOUND = 32 * 1024 * 1024;
const HEAP_GROWTH_BOUND = 16 * 1024 * 1024;
/** And whatever the GC cycle, resident memory never exceeds the warm-up figure by more than this. */
const RSS_PEAK_BOUND = 192 * 1024 * 1024;
const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

describe('soak', () => {
  it(
    `${SOAK_SECONDS}s at ${REQUESTS_PER_SECOND} requests/s across REST, MCP and webhooks: no error, bounded memory`,
    { timeout: (SOAK_SECONDS + 120) * 1000 },
    async () => {
      await using rx = await startReceiver();
      const db = await serverDatabase({ SVC_WEBHOOK_BACKOFF_BASE_MS: '100' });
      try {
        const setup = await db.open();
        const w = await createWorld(setup);
        await createWebhook(setup.services, { roomId: w.roomId, url: rx.url, createdById: w.owner.id });
        await setup.close();
        const server = await db.start({ SVC_WORKER: 'on', NODE_OPTIONS: '--inspect=127.0.0.1:0' });
        const pid = server.proc.pid!;
        const auth = { authorization: `Bearer ${w.key}` };
        const mcp = (name: string, args: object) =>
          attempt(`${server.base}/mcp`, {
            method: 'POST',
            headers: {
              ...auth,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-11-25',
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
          });
        const failures: string[] = [];
        const check = (what: string, o: Outcome, ok: (o: { status: number; body: any }) => boolean) => {
          if (!('status' in o) || !ok(o)) failures.push(`${what}: ${JSON.stringify(o).slice(0, 200)}`);
        };
        // the steady mix, one entry per request; writes rotate through messages, tasks, records, uploads and MCP
        let n = 0;
        const one = async () => {
          const i = n++;
          switch (i % 8) {
            case 0:
            case 4: {
              const x = await sendWrite(server.base, w.key, w.roomId, i);
              if (!succeeded(x)) failures.push(`${x.kind}: ${JSON.stringify(x.outcome).slice(0, 200)}`);
              return;
            }
            case 1:
              return check(
                'list messages',
                await attempt(`${server.base}/v1/rooms/${w.roomId}/messages?limit=20`, { headers: auth }),
                (o) => o.status === 200,
              );
            case 2:
              return check(
                'get room',
                await attempt(`${server.base}/v1/rooms/${w.roomId}`, { headers: auth }),
                (o) => o.status === 200,
              );
            case 3:
              return check(
                'list_tasks',
                await mcp('list_tasks', { roomId: w.roomId, limit: 20 }),
                (o) => o.status === 200 && !o.body.result?.isError,
              );
            case 5:
              return check(
                'events',
                await attempt(`${server.base}/v1/events?limit=20`, { headers: auth }),
                (o) => o.status === 200,
              );
            case 6:
              return check(
                'deliveries',
                await attempt(`${server.base}/v1/rooms/${w.roomId}/webhooks`, { headers: auth }),
                (o) => o.status === 200,
              );
            default:
              return check('get_me', await mcp('get_me', {}), (o) => o.status === 200 && !o.body.result?.isError);
          }
        };

        const samples: { t: number; rss: number }[] = [];
        const warmUpMs = Math.max(10_000, (SOAK_SECONDS * 1000) / 4);
        let warm: { rss: number; heapUsed: number } | null = null;
        const started = Date.now();
        const inFlight = new Set<Promise<void>>();
        let peakInFlight = 0;
        // the schedule is the clock's, not the ticks': each tick sends what is due by now, so a tick delayed by a busy
        // machine (or by the GC measurement) is caught up, and the whole schedule is sent however late the ticks ran
        const total = REQUESTS_PER_SECOND * SOAK_SECONDS;
        let issued = 0;
        const issueUntil = (due: number) => {
          for (; issued < Math.min(due, total); issued++) {
            const p = one().finally(() => inFlight.delete(p));
            inFlight.add(p);
          }
        };
        while (Date.now() - started < SOAK_SECONDS * 1000) {
          issueUntil(
            Math.floor(((Date.now() - started) * REQUESTS_PER_SECOND) / 1000) + (REQUESTS_PER_SECOND * TICK_MS) / 1000,
          );
          peakInFlight = Math.max(peakInFlight, inFlight.size);
          const t = Date.now() - started;
          if (samples.length === 0 || t - samples[samples.length - 1].t >= 1000)
            samples.push({ t, rss: residentBytes(pid) });
          if (!warm && t >= warmUpMs) warm = await memoryAfterGc(server.output, pid);
          await new Promise((r) => setTimeout(r, TICK_MS));
        }
        issueUntil(total);
        await Promise.all(inFlight);
        const end = await memoryAfterGc(server.output, pid);

        // every delivery of the soak reaches the receiver
        const rt = await db.open();
        try {
          await waitFor(
            async () =>
              Number(
                (
                  await sql<{ n: number }>(
                    rt.ds,
                    'SELECT COUNT(*) AS "n" FROM "webhook_deliveries" WHERE "state" = ?',
                    ['pending'],
                  )
                ).rows[0].n,
              ) === 0,
            'deliveries drained',
            60_000,
          );
          const states = (
            await sql<{ state: string; n: number }>(
              rt.ds,
              'SELECT "state", COUNT(*) AS "n" FROM "webhook_deliveries" GROUP BY "state"',
            )
          ).rows;
          expect(states.map((s) => s.state)).toEqual(['succeeded']);
          expect(await integrityProblems(rt)).toEqual([]);
        } finally {
          await rt.close();
        }
        expect(await server.stop('SIGTERM')).toBe(0);

        expect(failures.slice(0, 10)).toEqual([]);
        expect(n).toBeGreaterThanOrEqual(REQUESTS_PER_SECOND * SOAK_SECONDS * 0.9);
        const peak = Math.max(...samples.filter((x) => x.t >= warmUpMs).map((x) => x.rss));
        const report =
          `after GC: rss ${MiB(warm!.rss)} → ${MiB(end.rss)}, heap ${MiB(warm!.heapUsed)} → ${MiB(end.heapUsed)}; ` +
          `peak rss ${MiB(peak)}; ${n} requests, ${rx.requests.length} deliveries, at most ${peakInFlight} in flight`;
        expect(end.rss - warm!.rss, report).toBeLessThan(RSS_GROWTH_BOUND);
        expect(end.heapUsed - warm!.heapUsed, report).toBeLessThan(HEAP_GROWTH_BOUND);
        expect(peak - warm!.rss, report).toBeLessThan(RSS_PEAK_BOUND);
      } finally {
        await db.remove();
      }
    },
  );
});
