import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { startServerProcess } from '../multiprocess/processes.js';
import { openListen } from './listenStream.js';

const UPDATED = 'notifications/resources/updated';

/**
 * Subscriptions across processes: the writer is a second server process on the same database (the SQLite file
 * of the test server, or its PostgreSQL database under `npm run test:all`), and a stream served by a child
 * process ends gracefully on SIGTERM.
 */
describe('MCP subscriptions across processes', () => {
  it('announces a write made by another process, keeps an idle stream alive, and ends streams gracefully on SIGTERM', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { PORT: _port, BASE_URL: _base, ...shared } = t.env;
    const child = await startServerProcess({ ...shared, LOG_LEVEL: 'warn' });
    try {
      const uri = `svc://rooms/${w.roomId}/messages`;
      // served here, written there
      const here = await openListen(t, { resourceSubscriptions: [uri] }, { token: w.key });
      expect((await here.nextMessage()).method).toBe('notifications/subscriptions/acknowledged');
      const written = await call(
        { ...t, fetch: (p, init) => fetch(child.base + p, init) },
        'POST',
        `/v1/rooms/${w.roomId}/messages`,
        {
          key: w.key,
          body: { body: 'from the other process' },
        },
      );
      expect(written.status).toBe(201);
      expect(await here.nextMessage()).toMatchObject({ method: UPDATED, params: { uri } });
      here.close();

      // served there: an idle stream carries keep-alive comments, and SIGTERM ends it with the graceful result
      const there = await openListen(child.base, { resourceSubscriptions: [uri] }, { token: w.key, id: 9 });
      expect((await there.nextMessage()).method).toBe('notifications/subscriptions/acknowledged');
      expect(await there.next({ comments: true })).toEqual({ comment: 'keepalive' });
      const stopped = child.stop('SIGTERM');
      expect(await there.nextMessage()).toMatchObject({ id: 9, result: { resultType: 'complete' } });
      expect(await there.nextMessage()).toBeNull();
      expect(await stopped).toBe(0);
    } finally {
      await child.stop('SIGKILL');
    }
  });
});
