import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/domain/paging.js';
import { addRooms, call, createWorld, startTestServer } from '../helpers/harness.js';

describe('keyset paging of the list envelope', () => {
  it('pages 450 rooms with limit 200: no gap, no duplicate, and stable under concurrent inserts', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await addRooms(t.rt, w, 449);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await call(t, 'GET', `/v1/rooms?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        key: w.key,
      });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.nextCursor;
      pages++;
      if (pages === 1) {
        // a room created while paging lands after everything seen so far
        await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'late' } });
      }
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(451);
    expect(new Set(seen).size).toBe(451);
    expect([...seen].sort()).toEqual(seen);
  });

  it('defaults to 50 and says nextCursor null on the last page', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await addRooms(t.rt, w, 59);
    const first = await call(t, 'GET', '/v1/rooms', { key: w.key });
    expect(first.body.data).toHaveLength(50);
    const second = await call(t, 'GET', `/v1/rooms?cursor=${first.body.nextCursor}`, { key: w.key });
    expect(second.body.data).toHaveLength(10);
    expect(second.body.nextCursor).toBeNull();
  });

  it('refuses bad limits and forged cursors with 400 validation_error and details', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const forged = encodeCursor('not-the-server-secret', 'room_0');
    const good = encodeCursor(t.rt.services.secret, 'room_0');
    const tampered = good.replace(/^./, (c) => (c === 'e' ? 'f' : 'e'));
    for (const q of [
      'limit=0',
      'limit=-1',
      'limit=201',
      'limit=99999999999999999999',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'cursor=abc',
      `cursor=${forged}`,
      `cursor=${tampered}`,
      'cursor=' + 'A'.repeat(5000),
      'limit=1&limit=2',
      'foo=bar',
    ]) {
      const r = await call(t, 'GET', `/v1/rooms?${q}`, { key: w.key });
      expect(r.status, q).toBe(400);
      expect(r.body.error.code, q).toBe('validation_error');
      expect(r.body.error.details, q).toBeTypeOf('object');
    }
    expect((await call(t, 'GET', `/v1/rooms?cursor=${good}`, { key: w.key })).status).toBe(200);
  });
});
