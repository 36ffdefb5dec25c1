import { z } from 'zod';
import { EVENT_CATALOG, OBJECT_TYPES, type ObjectType } from '../domain/catalog.js';
import { listEvents } from '../domain/eventLog.js';
import { idOf, normalizedSince, pageInput, text, timeListInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { checkedListOf } from './views.js';

export const EventTypeView = z
  .object({ type: z.string().meta({ example: 'record.created' }), description: z.string(), stable: z.boolean() })
  .meta({ id: 'EventType' });

export const EventView = z
  .object({
    id: z.string().meta({ example: 'evt_3q2-7wEVjvXq0mFz7f4ZTA' }),
    type: z.string(),
    createdAt: timestamp,
    organizationId: idOf('org').nullable(),
    roomId: idOf('room'),
    actor: z.enum(['user', 'app', 'agent']),
    data: z.object({ object: z.object({ id: z.string(), type: z.enum(OBJECT_TYPES) }) }),
  })
  .meta({ id: 'EventObject' });

export const eventsRouter = router({
  types: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/event-types' },
      tool: {
        name: 'list_event_types',
        title: 'List event types',
        description: 'Event types that can be subscribed to; preview types (stable=false) never fire.',
      },
      summary: 'The event catalog',
      description: 'Event types that can be subscribed to. Preview types (stable=false) never fire.',
      tags: ['events'],
      scope: 'events:read',
      units: 1,
      kind: 'read',
    })
    .input(z.strictObject({}))
    .output(z.object({ data: z.array(EventTypeView), nextCursor: z.null() }))
    .query(() => ({
      data: EVENT_CATALOG.map(({ type, description, stable }) => ({ type, description, stable })),
      nextCursor: null,
    })),

  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/events' },
      tool: {
        name: 'list_events',
        title: 'List events',
        description:
          'The event log of rooms you can read (id-only payloads), oldest first; filter by type, roomId or since.',
      },
      summary: 'The event log',
      description:
        'Events of the rooms the caller can read, oldest first (`order=desc`: newest first). ID-only payloads; fetch details through the API. `since` keeps events created at or after that time (how `svc listen` follows the log).',
      tags: ['events'],
      scope: 'events:read',
      units: 1,
      kind: 'read',
    })
    .input(
      z.strictObject({
        ...pageInput,
        type: text(100)
          .optional()
          .meta({ description: 'Only events of this type (e.g. record.created)', example: 'record.created' }),
        roomId: idOf('room').optional().meta({ description: 'Only events of this room' }),
        ...timeListInput,
      }),
    )
    .output(checkedListOf(EventView))
    .query(async ({ ctx, input }) => {
      const page = await listEvents(
        ctx.services.ds.manager,
        ctx.actor,
        { ...input, since: normalizedSince(input.since) },
        ctx.services.secret,
      );
      return {
        data: page.data.map((e) => ({
          id: e.id,
          type: e.type,
          createdAt: e.createdAt,
          organizationId: e.organizationId,
          roomId: e.roomId,
          actor: e.actor as 'user',
          data: { object: { id: e.objectId, type: e.objectType as ObjectType } },
        })),
        nextCursor: page.nextCursor,
      };
    }),
});
