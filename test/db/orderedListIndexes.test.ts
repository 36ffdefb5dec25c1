import { describe, expect, it } from 'vitest';
import { isPostgres, sql } from '../../db/sql.js';
import { addRooms, call, createWorld, startTestServer } from '../helpers/harness.js';
import { addWebhook } from '../webhooks/helpers.js';

/** The statement `listRooms` runs for an organization's owner (src/domain/rooms.ts), one page after a cursor. */
const ROOMS_PAGE =
  'SELECT r."id", r."name", r."roomType", r."organizationId", r."createdById", r."createdAt", r."updatedAt" FROM "rooms" r ' +
  'WHERE r."roomType" = 0 AND r."organizationId" = ? AND r."id" > ? ORDER BY r."id" ASC LIMIT ?';

/**
 * The statement an event's transaction runs for its room's webhooks when the room has some (src/webhooks/outbox.ts).
 */
const ROOM_WEBHOOKS = 'SELECT "id" FROM "webhooks" WHERE "roomId" = ? AND "active" = ? ORDER BY "id"';

describe('lookups of rows in id order read them from an index (migration 1764000009000)', () => {
  it('a page of GET /v1/rooms is planned on (organizationId, id), with no sort of every room of the organization', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await addRooms(t.rt, w, 120);
    const s = t.rt.services;
    const page = await call(t, 'GET', '/v1/rooms?limit=50', { key: w.key });
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(50);
    if (isPostgres(s.ds)) {
      const rows = await s.ds.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'rooms'`);
      expect(rows.map((r: { indexdef: string }) => r.indexdef).join('\n')).toMatch(/\("organizationId", id\)/);
    } else {
      const plan = (await s.ds.query(`EXPLAIN QUERY PLAN ${ROOMS_PAGE}`, [w.orgId, 'room_0', 51])) as {
        detail: string;
      }[];
      const text = plan.map((p) => p.detail).join('\n');
      expect(text).toMatch(/IDX_rooms_organizationId_id/);
      expect(text).not.toMatch(/TEMP B-TREE/);
    }
  });

  it("an event's webhooks are planned on (roomId, id), with no sort", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    // the room's webhook is found through the index
    const hook = await addWebhook(t.rt, w.roomId, 'https://hooks.example.com/a');
    const rows = (await sql<{ id: string }>(s.ds, ROOM_WEBHOOKS, [w.roomId, true])).rows;
    expect(rows.map((r) => r.id)).toEqual([hook.id]);
    if (isPostgres(s.ds)) {
      const defs = await s.ds.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'webhooks'`);
      expect(defs.map((r: { indexdef: string }) => r.indexdef).join('\n')).toMatch(/\("roomId", id\)/);
    } else {
      const plan = (await s.ds.query(`EXPLAIN QUERY PLAN ${ROOM_WEBHOOKS}`, [w.roomId, 1])) as { detail: string }[];
      const text = plan.map((p) => p.detail).join('\n');
      expect(text).toMatch(/IDX_webhooks_roomId_id/);
      expect(text).not.toMatch(/TEMP B-TREE/);
    }
  });
});
